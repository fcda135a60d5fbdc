"""Which profiles `helm lint` is asked of, the lint costing far more than a render: at head the
first profile and every one the PR rendered differently; once per byte-identical render; the base
only where the head's lint says something to fold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bot.model.context import LintSeverity, Rendered
from bot.model.rendered_diff import RELEASE_NOISE, renders_alike


def output_twins(
    side: Mapping[str, Rendered], names: Sequence[str], first: Sequence[str] = ()
) -> dict[str, str]:
    """Among `names`, each profile whose render is byte for byte another's (`Rendered.output`),
    with that other one: Helm's lint reads the chart and the render, so the same output gets the
    same messages, and is linted once. Those in `first` (linted already) are the ones kept."""
    kept: dict[str, str] = {}
    twins: dict[str, str] = {}
    for name in sorted(names, key=lambda n: n not in first):
        output = side[name].output if name in side else None
        if output is None:
            continue
        if output in kept:
            twins[name] = kept[output]
        else:
            kept[output] = name
    return twins


def lint_at_head(base: Mapping[str, Rendered], head: Mapping[str, Rendered]) -> list[str]:
    """The head profiles whose lint may say something the base's does not: every one whose render
    the PR changed (or failed, or the base lacks), and the first profile in any case, for what
    lint says of the chart itself (Chart.yaml, dependencies, file names), the same on every
    profile. A profile rendering at both sides into the same objects but for what every release
    changes (the chart's version in labels, checksums, a generated CA) is given the same inputs
    by the PR as by its base, and lint would repeat the base's messages: folded as pre-existing,
    at 30-40x a render's cost."""
    names = [n for n in sorted(head) if lintable(head[n])]
    return [n for i, n in enumerate(names) if i == 0 or lint_matters(n, base, head)]


def lint_matters(name: str, base: Mapping[str, Rendered], head: Mapping[str, Rendered]) -> bool:
    """Lintable at head, and rendered by the PR into something the base did not render."""
    rendered = head[name]
    return lintable(rendered) and (
        name not in base or not renders_alike(base[name], rendered, RELEASE_NOISE)
    )


def lintable(rendered: Rendered) -> bool:
    """Rendered, or failed on the chart's own error (which names its template): not stopped by a
    limit, which a second request would only meet again (a hanging chart would hold a worker
    twice as long)."""
    return rendered.error is None or rendered.error.template is not None


def says_something(rendered: Iterable[Rendered]) -> bool:
    """A lint warning or error at head, which the base's lint may already have had."""
    return any(
        m.severity in (LintSeverity.WARNING, LintSeverity.ERROR)
        for r in rendered
        for m in r.lint or ()
    )
