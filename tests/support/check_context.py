"""Any chart check's context from YAML text, with neither git nor Helm: what a check's unit tests
build, in milliseconds, where an end-to-end test (tests/support/pr_review.py: a real repository,
real renders) takes most of a second.

`chart_context(base, head)` takes each side's renders by profile (the rendered YAML, as `helm
template` prints it, or {template path in the chart: its rendered YAML}) and, optionally, each
side's repository files; the PR's changes are the files that differ, with the lines each side
added and removed as a line diff gives them. The config is the YAML text of
`.github/chart-review.yml`, parsed as the engine parses it. `run_check(name, ctx)` is that check's
findings, from the registry the engine is handed.

What such a context cannot give: provenance (a finding moved to the values line that set its
field is the engine's, after the check), other open PRs' renders, and git: a check that reads
history (`version`) or other repositories (`headings`) is tested end to end."""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Mapping
from typing import Any

from bot.errors import ChartReviewError
from bot.git.objects import ChangedFile
from bot.model.check import Check
from bot.model.config import CONFIG_PATH, parse_config
from bot.model.context import ChartContext, ChartRenders, Rendered
from bot.model.manifests import parse_rendered
from bot.model.report import Finding
from checks import REGISTRY
from tests.support.qos import DictTree

CHART = "charts/app"
ONE_TEMPLATE = (
    "templates/all.yaml"  # where a side's renders given as one text are said to come from
)

# A profile's render: the whole output as one text, or the text of each template.
Render = str | Mapping[str, str]


class NoGit:
    """The context's `git` for a check that should not need it: any use says so, by name."""

    def __getattr__(self, name: str) -> Any:
        raise ChartReviewError(
            f"the check asked git for {name!r}: test it on a real repository "
            "(tests/support/pr_review.py or tests/support/gitbuilder.py)"
        )


def rendered(
    profile: str, render: Render, chart: str = CHART, namespace: str = "default"
) -> Rendered:
    texts = {ONE_TEMPLATE: render} if isinstance(render, str) else dict(render)
    # Helm names each output by the chart's name and the template's path within it.
    by_helm_name = {f"{chart.rsplit('/', 1)[-1]}/{t}": textwrap.dedent(x) for t, x in texts.items()}
    documents = parse_rendered(by_helm_name, chart, namespace)
    return Rendered(profile=profile, documents=documents)


def changes(base: Mapping[str, str], head: Mapping[str, str]) -> tuple[ChangedFile, ...]:
    """The files that differ between the sides, each with the lines (1-based) the head added and
    the base lost."""
    out = []
    for path in sorted(base.keys() | head.keys()):
        old, new = base.get(path), head.get(path)
        if old == new:
            continue
        status = "A" if old is None else "D" if new is None else "M"
        added, removed = _lines((old or "").splitlines(), (new or "").splitlines())
        out.append(ChangedFile(path, status, None, frozenset(added), frozenset(removed)))
    return tuple(out)


def _lines(old: list[str], new: list[str]) -> tuple[set[int], set[int]]:
    added: set[int] = set()
    removed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "equal":
            removed.update(range(a0 + 1, a1 + 1))
            added.update(range(b0 + 1, b1 + 1))
    return added, removed


def chart_context(
    base: Mapping[str, Render],
    head: Mapping[str, Render],
    *,
    chart: str = CHART,
    base_files: Mapping[str, str] | None = None,
    head_files: Mapping[str, str] | None = None,
    config: str | None = None,
    namespace: str = "default",
) -> ChartContext:
    """`base`/`head`: profile → its render (a profile missing from a side was not rendered there)."""
    renders = ChartRenders(
        path=chart,
        name=chart.rsplit("/", 1)[-1],
        base={p: rendered(p, r, chart, namespace) for p, r in base.items()},
        head={p: rendered(p, r, chart, namespace) for p, r in head.items()},
    )
    old, new = dict(base_files or {}), dict(head_files or {})
    if config is not None:
        old[CONFIG_PATH] = new[CONFIG_PATH] = textwrap.dedent(config)
    base_tree, head_tree = DictTree(old, "b" * 40), DictTree(new, "h" * 40)
    return ChartContext(
        config=parse_config(old.get(CONFIG_PATH), known_checks=REGISTRY.options),
        git=NoGit(),  # type: ignore[arg-type]
        base=base_tree,
        head=head_tree,
        target=base_tree,
        develop=None,
        changes=changes(old, new),
        charts=(renders,),
        chart=renders,
        namespace=namespace,
    )


def run_check(name: str, ctx: ChartContext) -> list[Finding]:
    check: Check[Any] | None = REGISTRY.by_name(name)
    assert check is not None and check.scope == "chart", f"{name}: no chart check of that name"
    return check.run(ctx)
