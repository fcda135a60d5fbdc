"""The keys a PR changed in a values file, each with the line that writes it at head.

A key is changed where its value at head differs from the base's: the deepest key at head below
which nothing is alike (`resources: {}` where the base had requests and limits is the change of
`resources`; a new `cpu:` under an unchanged `limits:` is the change of `resources.limits.cpu`).
Lists are values whole, as Helm merges them. Keys are read from the YAML as composed, so their
lines are exact; the text is the PR's, so the walk is bounded (MAX_KEYS) and an alias is read at
its anchor only."""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from bot.lru import BoundedCache
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from bot.model.yaml.loader import LOADER
from bot.textlines import git_lines

# Keys walked in one values file: a values.yaml of 4,000 lines has some 3,000. Past it the file's
# changes are not read (its findings keep their template lines).
MAX_KEYS = 50_000
ABSENT = object()  # a key the base does not have
# Changed keys of a values file by its texts: a review's profiles share them (a few per chart).
_CHANGED: BoundedCache[tuple[str, str, str], tuple[ChangedKey, ...]] = BoundedCache(64)

Path = tuple[str, ...]


@dataclass(frozen=True)
class ChangedKey:
    """One key the PR changed in values file `file`: where (`path`, `line`, its `text` at head)
    and what (`head`, and `base`, ABSENT where the file had no such key)."""

    file: str
    path: Path
    line: int
    text: str
    head: Any
    base: Any

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def changed_keys(file: str, base_text: str | None, head_text: str) -> list[ChangedKey]:
    """The keys of `file` the PR changed (`base_text` None: the file is new), in file order; none
    when either side is no mapping of YAML (the render reports that). Remembered by the texts:
    every profile of a chart asks of its values.yaml again."""
    key = (file, _digest(base_text), _digest(head_text))
    return list(_CHANGED.get_or_make(key, lambda: tuple(_changed(file, base_text, head_text))))


def _digest(text: str | None) -> str:
    return "" if text is None else hashlib.sha256(text.encode()).hexdigest()


def _changed(file: str, base_text: str | None, head_text: str) -> list[ChangedKey]:
    head, lines = _parsed(head_text)
    base, _ = _parsed(base_text) if base_text is not None else ({}, {})
    if not isinstance(head, Mapping) or not isinstance(base, Mapping) or lines is None:
        return []
    rows = git_lines(head_text)
    found = []
    for path, value, was in _differences(base, head, ()):
        line = lines.get(path)
        if line is not None:
            found.append(ChangedKey(file, path, line, rows[line - 1].strip(), value, was))
    return sorted(found, key=lambda k: k.line)


def _differences(base: Mapping[str, Any], head: Mapping[str, Any], at: Path) -> Iterator:
    """(path, head value, base value) of every changed key under `at`."""
    for key, value in head.items():
        if not isinstance(key, str):
            continue
        path, was = (*at, key), base.get(key, ABSENT)
        if isinstance(value, Mapping) and isinstance(was, Mapping) and value and was:
            if value == was:
                continue
            inner = list(_differences(was, value, path))
            # Only keys removed below it: the mapping itself is what changed.
            yield from inner or [(path, value, was)]
            if inner and set(was) - set(value):
                yield path, value, was
        elif was is ABSENT or value != was or type(value) is not type(was):
            yield path, value, was


def _parsed(text: str) -> tuple[Any, dict[Path, int] | None]:
    """The file's data (as the render reads it) and the head line of every mapping key."""
    try:
        data = bounded.load(text)
        root = yaml.compose(text, Loader=LOADER)
    except YAML_FAILURES:
        return None, None
    return data, _key_lines(root)


def _key_lines(root: yaml.Node | None) -> dict[Path, int] | None:
    lines: dict[Path, int] = {}
    seen: set[int] = set()
    # In file order, so that an anchored mapping is read where it is written, not at an alias.
    todo: deque[tuple[yaml.Node, Path]] = deque([(root, ())] if root is not None else [])
    while todo:
        node, at = todo.popleft()
        if not isinstance(node, yaml.MappingNode) or id(node) in seen:
            continue
        seen.add(id(node))
        for key, value in node.value:
            if len(lines) >= MAX_KEYS:
                return None
            if isinstance(key, yaml.ScalarNode):
                path = (*at, key.value)
                lines.setdefault(path, key.start_mark.line + 1)
                todo.append((value, path))
    return lines


def value_at(values: Mapping[str, Any], path: Path) -> Any:
    """The value at `path`, or ABSENT."""
    node: Any = values
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return ABSENT
        node = node[key]
    return node
