"""The keys a PR changed in one profile's values that reach its render: in the chart's
`values.yaml` unless the profile's supplied values replace them, in the profile's values file unless
a later layer (the config's inline values, the command line's) does; and which of them are new at
head, with no base value anywhere to put back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.charts.profiles import load_values, merge_values
from bot.model.chart_files import dir_prefix
from bot.model.context import ChartRenders, Context
from bot.model.values_keys import ABSENT, ChangedKey, changed_keys, value_at
from bot.render.base import RenderFailure

VALUES_FILE = "values.yaml"


def live_keys(
    ctx: Context, chart: ChartRenders, profile: str
) -> tuple[list[ChangedKey], frozenset[tuple[str, tuple[str, ...]]]]:
    """The keys the PR changed in the profile's values that reach its render (not replaced by a
    later layer), and those of them new at head: absent from the base's values altogether, and
    not under a subchart's name (whose own defaults a base value may be)."""
    defaults = f"{dir_prefix(chart.path)}{VALUES_FILE}"
    spec = chart.profiles.get(profile)
    files = [defaults, *([spec.values_file] if spec is not None and spec.values_file else [])]
    supplied = chart.head[profile].values
    keys: list[ChangedKey] = []
    for file in dict.fromkeys(files):
        change = ctx.changed(file)
        text = ctx.head.text(file) if change is not None and change.status != "D" else None
        if change is None or text is None:
            continue
        found = changed_keys(file, ctx.base.text(change.old_path or file), text)
        keys += [k for k in found if _live(k, supplied, file == defaults)]
    base = _base_values(ctx, chart, profile, defaults)
    subcharts = {
        d.rstrip("/").rsplit("/", 1)[-1] for side in chart.dependencies.values() for d in side
    }
    fresh = frozenset(
        (k.file, k.path)
        for k in keys
        if value_at(base, k.path) is ABSENT and k.path[0] not in subcharts
    )
    return keys, fresh


def _live(key: ChangedKey, supplied: Mapping[str, Any], defaults: bool) -> bool:
    """Whether the key's value reaches the render: a profile file's, unless a later layer (the
    config's inline values, the command line's) replaced it; the chart's defaults', unless the
    supplied values set it (or a non-mapping above it), a mapping merging with theirs."""
    if not defaults:
        now = value_at(supplied, key.path)
        return isinstance(now, Mapping) if isinstance(key.head, Mapping) else now == key.head
    node: Any = supplied
    for step in key.path:
        if not isinstance(node, Mapping):
            return False
        if step not in node:
            return True
        node = node[step]
    return isinstance(node, Mapping) and isinstance(key.head, Mapping)


def _base_values(ctx: Context, chart: ChartRenders, profile: str, defaults: str) -> dict[str, Any]:
    """The base's chart defaults with the base profile's supplied values over them."""
    text = ctx.base.text(defaults)
    try:
        values = load_values(text, defaults) if text else {}
    except RenderFailure:  # the render check reports a values file that does not parse
        values = {}
    rendered = chart.base.get(profile)
    return merge_values(values, rendered.values) if rendered is not None else values
