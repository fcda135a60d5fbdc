"""The rendered version of "the same change": an object of a chart changed the same way on the same
profile by two PRs, whatever text got them there (one edits values.yaml, the other the template).

Both changes are measured from one base (bot/engine/other_renders.py renders the other PR's head
against this review's base), so the same object diff means the same object before and after. The
diff is the rendered diff's own (bot/engine/rendered_diff.py), with the noise the config's `diff:`
names left out; an object whose change is only the chart's version or appVersion spelled into it
(an image tag, a label the config keeps) is the version check's race, not a duplicate."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot.engine.chart.files import ChartMeta, read_chart_meta
from bot.engine.config import DiffConfig
from bot.engine.context import ChartRenders, Context, OpenPR, Rendered
from bot.engine.rendered_diff import CHANGED, profile_diff
from bot.git.objects import Tree

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
    lines = diff.splitlines()[_HEADER_LINES:]
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
    mine = {c.path: c for c in ctx.charts}
    head = ctx.git.tree(pr.head)
    noise = ctx.config.diff
    shared: set[ObjectChange] = set()
    for theirs in rendered:
        chart = mine.get(theirs.path)
        if chart is None:
            continue
        keys = _alike(chart, theirs, noise)
        own = object_changes(
            _only(chart, keys), noise, version_bumps(ctx.base, ctx.head, chart.path)
        )
        other = _only(theirs, keys)
        shared |= own & object_changes(other, noise, version_bumps(ctx.base, head, chart.path))
    return frozenset(shared), frozenset(c.path for c in rendered)


def _alike(mine: ChartRenders, theirs: ChartRenders, noise: DiffConfig) -> dict[str, set[str]]:
    """Per profile both rendered, the objects whose heads could be the same modulo noise: removed
    by both, or alike outside labels, annotations and ignored fields. A cheap test that spares
    the dumps of a noise-aware diff of every object, for the few it keeps."""
    keys: dict[str, set[str]] = {}
    for name, ours in mine.head.items():
        other = theirs.head.get(name)
        if other is None or ours.error is not None or other.error is not None:
            continue
        by_key = {d.key: d for d in other.documents}
        keys[name] = {
            d.key
            for d in ours.documents
            if d.key in by_key and _coarse(d.body, noise) == _coarse(by_key[d.key].body, noise)
        }
        base = mine.base.get(name)
        if base is not None:
            keys[name] |= _keys(base) - _keys(ours) - set(by_key)
    return keys


def _only(chart: ChartRenders, keys: dict[str, set[str]]) -> ChartRenders:
    """`chart` with, on each profile of `keys`, only those objects at base and head."""

    def kept(renders: Mapping[str, Rendered]) -> dict[str, Rendered]:
        return {
            name: replace(r, documents=tuple(d for d in r.documents if d.key in keys[name]))
            for name, r in renders.items()
            if name in keys
        }

    return replace(chart, base=kept(chart.base), head=kept(chart.head))


def _keys(render: Rendered) -> set[str]:
    return {d.key for d in render.documents}


def _coarse(value: Any, noise: DiffConfig) -> Any:
    """`value` without any metadata's labels and annotations, nor ignored fields: more than the
    noise the diff leaves out, so two objects unlike here differ beyond noise."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if any(fnmatch.fnmatchcase(str(k), p) for p in noise.ignore_fields):
                continue
            if k == "metadata" and isinstance(v, Mapping):
                v = {mk: mv for mk, mv in v.items() if mk not in _NOISY_METADATA}
            out[str(k)] = _coarse(v, noise)
        return out
    if isinstance(value, list | tuple):
        return [_coarse(v, noise) for v in value]
    return value
