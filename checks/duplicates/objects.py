"""The rendered version of "the same change": an object of a chart changed the same way on the same
profile by two PRs, whatever text got them there (one edits values.yaml, the other the template).

Both changes are measured from one base (bot/charts/other_renders.py renders the other PR's head
against this review's base), so the same object diff means the same object before and after. The
diff is the rendered diff's own (bot/model/rendered_diff.py), with the noise the config's `diff:`
names left out; an object whose change is only the chart's version or appVersion spelled into it
(an image tag, a label the config keeps) is the version check's race, not a duplicate."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot.git.objects import Tree
from bot.model.chart_files import ChartMeta, read_chart_meta
from bot.model.config import DiffConfig
from bot.model.context import ChartRenders, Context, OpenPR, Rendered
from bot.model.diff_noise import fields_pattern
from bot.model.rendered_diff import CHANGED, profile_diff
from bot.textlines import git_lines

# A rendered diff says what changed from here on; what it writes instead (too large, too deep to
# diff) is the same words for different changes, so it is never compared.
_DIFF_START = "--- "
_HEADER_LINES = 2  # `--- a/key` and `+++ b/key`
_NOISY_METADATA = frozenset({"labels", "annotations"})


@dataclass(frozen=True)
class ObjectChange:
    chart: str
    profile: str
    key: str  # Kind/namespace/name
    diff: str  # from the shared base: the same diff is the same object after
    template: str = field(default="", compare=False)  # where it is rendered from, at head


def object_changes(
    chart: ChartRenders,
    noise: DiffConfig,
    bumps: Iterable[tuple[str, str]] = (),
) -> frozenset[ObjectChange]:
    """Each object's change from base to head on each profile rendered at both, but the changes
    that are only `bumps` (old → new version strings) substituted."""
    bumped = tuple(bumps)
    found = set()
    for name in sorted(set(chart.base) & set(chart.head)):
        diff = profile_diff(name, chart.base[name], chart.head[name], noise)
        if diff.status != CHANGED:
            continue
        templates = {d.key: d.template for d in chart.head[name].documents}
        for obj in diff.objects:
            if obj.text.startswith(_DIFF_START) and not only_bumps(obj.text, bumped):
                where = templates.get(obj.key, "")
                found.add(ObjectChange(chart.path, name, obj.key, obj.text, where))
    return frozenset(found)


def version_bumps(before: Tree, after: Tree, chart: str) -> tuple[tuple[str, str], ...]:
    """The chart's `version` and `appVersion` where they changed: (old, new)."""
    old = read_chart_meta(before, chart) or ChartMeta(chart)
    new = read_chart_meta(after, chart) or ChartMeta(chart)
    pairs = ((old.version, new.version), (old.app_version, new.app_version))
    return tuple((a, b) for a, b in pairs if a and b and a != b)


def only_bumps(diff: str, bumps: tuple[tuple[str, str], ...]) -> bool:
    """Whether every removed line of `diff`, with the old versions replaced by the new, is the
    added line in its place."""
    if not bumps:
        return False
    lines = git_lines(diff)[_HEADER_LINES:]
    removed = [line[1:] for line in lines if line.startswith("-")]
    added = [line[1:] for line in lines if line.startswith("+")]
    return len(removed) == len(added) and all(
        _substituted(r, bumps) == a for r, a in zip(removed, added, strict=True)
    )


def _substituted(line: str, bumps: tuple[tuple[str, str], ...]) -> str:
    for old, new in bumps:
        line = line.replace(old, new)
    return line


def shared_changes(ctx: Context, pr: OpenPR) -> tuple[frozenset[ObjectChange], frozenset[str]]:
    """The object changes this PR and `pr` share, and the charts `pr` was rendered for (none when
    the engine did not render it: beyond its cap, or reaching no profile this PR changes)."""
    rendered = ctx.other_renders.get(pr.head, ())
    if not rendered:
        return frozenset(), frozenset()  # most open PRs: not rendered, nothing to read
    mine = {c.path: c for c in ctx.charts}
    head = ctx.git.tree(pr.head)
    noise = ctx.config.diff
    shared: set[ObjectChange] = set()
    for theirs in rendered:
        chart = mine.get(theirs.path)
        if chart is None:
            continue
        # This PR's own changes: the review's diffs, made once. Only those can be shared, so only
        # those objects of the other head are compared, and diffed where they are alike.
        own = object_changes(chart, noise, version_bumps(ctx.base, ctx.head, chart.path))
        keys = _alike(chart, theirs, own, noise)
        other = object_changes(
            _only(theirs, keys), noise, version_bumps(ctx.base, head, chart.path)
        )
        shared |= {c for c in own if c.key in keys.get(c.profile, ())} & other
    return frozenset(shared), frozenset(c.path for c in rendered)


def _alike(
    mine: ChartRenders, theirs: ChartRenders, own: Iterable[ObjectChange], noise: DiffConfig
) -> dict[str, set[str]]:
    """Per profile, the objects of `own` whose heads could be the same modulo noise: removed by
    both, or alike outside labels, annotations and ignored fields. A cheap test that spares the
    dumps of a noise-aware diff of every object, for the few it keeps."""
    changed: dict[str, set[str]] = {}
    for change in own:
        changed.setdefault(change.profile, set()).add(change.key)
    keys: dict[str, set[str]] = {}
    ignored = fields_pattern(tuple(noise.ignore_fields))
    for name, wanted in changed.items():
        ours, other = mine.head.get(name), theirs.head.get(name)
        if ours is None or other is None or ours.error is not None or other.error is not None:
            continue
        a, b = _documents(ours, wanted), _documents(other, wanted)
        keys[name] = {
            key
            for key in wanted
            if (key not in a and key not in b)
            or (key in a and key in b and _alike_outside_noise(a[key], b[key], ignored))
        }
    return keys


def _documents(render: Rendered, keys: set[str]) -> dict[str, Any]:
    return {d.key: d.body for d in render.documents if d.key in keys}


def _only(chart: ChartRenders, keys: dict[str, set[str]]) -> ChartRenders:
    """`chart` with, on each profile of `keys`, only those objects at base and head."""

    def kept(renders: Mapping[str, Rendered]) -> dict[str, Rendered]:
        return {
            name: replace(r, documents=tuple(d for d in r.documents if d.key in keys[name]))
            for name, r in renders.items()
            if name in keys
        }

    return replace(chart, base=kept(chart.base), head=kept(chart.head))


def _alike_outside_noise(a: Any, b: Any, ignored: re.Pattern[str] | None) -> bool:
    """Whether `a` and `b` are equal but for any metadata's labels and annotations and the values
    of ignored fields: more than the noise the diff leaves out, so two objects unlike here differ
    beyond noise. Walked side by side, stopping at the first difference, with no copy made."""
    if a is b:
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict):
            return False
        mine, theirs = _kept(a, ignored), _kept(b, ignored)
        if mine.keys() != theirs.keys():
            return False
        for key, value in mine.items():
            other = theirs[key]
            if key == "metadata" and isinstance(value, dict) and isinstance(other, dict):
                value, other = _without_noisy(value), _without_noisy(other)
            if not _alike_outside_noise(value, other, ignored):
                return False
        return True
    if isinstance(a, list | tuple):
        return (
            isinstance(b, list | tuple)
            and len(a) == len(b)
            and all(_alike_outside_noise(x, y, ignored) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b) and not isinstance(b, dict | list | tuple)


def _kept(value: dict[Any, Any], ignored: re.Pattern[str] | None) -> dict[str, Any]:
    # Keys as text, as the diff compares them (YAML keys may mix numbers and strings).
    return {str(k): v for k, v in value.items() if ignored is None or not ignored.match(str(k))}


def _without_noisy(metadata: dict[Any, Any]) -> dict[Any, Any]:
    return {k: v for k, v in metadata.items() if k not in _NOISY_METADATA}
