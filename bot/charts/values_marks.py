"""Marking values to see where they land: each key the PR changed gets a marker of its own in one
extra render, and a rendered field carries the markers of the keys it was made from.

A string value becomes `crbmark<n>x`, in place; a mapping gets a marker key added (so `toYaml` and
`with` render it, and a template reading one of its keys reads what it did); a list of scalars a
marker item, a list of mappings a marker key in each. Numbers become marker strings too, never a
marker number: a template looping `until .Values.replicas` would spin on a large one, and a
number small enough to be safe is no marker. A boolean or a null cannot be marked (two values are
no marker): the change of one is not read here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.charts.profiles import merge_values
from bot.model.values_keys import ChangedKey

MARK_RE = re.compile(r"crbmark(\d+)x")
# Nodes of a rendered field read for markers: a container's resources are a dozen, a probe less.
MAX_NODES = 10_000


def marker(index: int) -> str:
    return f"crbmark{index}x"


def marked(value: Any, index: int) -> Any | None:
    """`value` carrying marker `index`, or None when it cannot carry one."""
    mark = marker(index)
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Mapping):
        return {mark: mark}  # merged into the value where it stands: see overlay
    if isinstance(value, list):
        if not value or any(isinstance(item, Mapping) for item in value):
            items = [item for item in value if isinstance(item, Mapping)] or [{}]
            return [{**item, mark: mark} for item in items]
        return [*value, mark]
    return mark


def overlay(keys: Sequence[ChangedKey]) -> tuple[dict[str, Any], dict[int, ChangedKey]]:
    """The values that mark every key that can carry one (to merge last over a profile's supplied
    values, which Helm merges over the chart's defaults), and which key each marker stands for."""
    marks: dict[str, Any] = {}
    meant: dict[int, ChangedKey] = {}
    for index, key in enumerate(keys, 1):
        value = marked(key.head, index)
        if value is None:
            continue
        meant[index] = key
        nested: Any = value
        for step in reversed(key.path):
            nested = {step: nested}
        marks = merge_values(marks, nested)
    return marks, meant


def landed(value: Any, meant: Mapping[int, ChangedKey]) -> list[ChangedKey]:
    """The keys whose markers `value` (a rendered field) carries, in file order."""
    found: set[int] = set()
    todo, seen = [value], 0
    while todo and seen < MAX_NODES:
        node = todo.pop()
        seen += 1
        if isinstance(node, Mapping):
            todo += list(node.values())
            found.update(_marks(node.keys()))
        elif isinstance(node, list):
            todo += node
        else:
            found.update(_marks([node]))
    return sorted((meant[i] for i in found if i in meant), key=lambda k: (k.file, k.line))


def _marks(items: Iterable[Any]) -> set[int]:
    return {int(m) for item in items if isinstance(item, str) for m in MARK_RE.findall(item)}
