"""Template lines for findings: the line inside a container's block, a selector's label, a kind.

Templates are not YAML until rendered, so this reads them as indented text: a block is the lines
indented deeper than the line that opens it, template directives (`{{ ... }}`) not ending it.
(A candidate for `bot/model/manifests.py`, next to `container_name_line`, once that file is free.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.model.manifests import container_name_line, find_line
from bot.textlines import git_lines
from checks.kit.containers import LIST_KEYS

# A container's own `name:` (as a key of its list item, not of a port or volume mount inside it):
# its value up to a comment, the spaces before it stripped after (a lazy value tried the rest of
# the line at each character: 64 KB of spaces in a name took 94 s).
NAME_RE = re.compile(r"name:\s*+(?P<value>[^#]*+)")
_DASH = re.compile(r"^(?P<indent> *)-(?P<gap>\s+)(?P<rest>\S.*)?$")


@dataclass(frozen=True)
class ListItem:
    """One item of a container list in a template: the 1-based lines it spans and its `name:` value
    as written (None when it has no `name:` key; a value holding `{{` is templated)."""

    key: str  # the list it is in: `containers`, `initContainers`
    start: int
    end: int
    name: str | None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _skipped(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith(("{{", "#"))


def block_line(source: str | None, start: int | None, pattern: str) -> int | None:
    """The first line matching `pattern` in the block opened at line `start` (1-based), or None. A
    list item (`- name: x`) opens the block of its whole entry."""
    if not source or start is None:
        return None
    lines = git_lines(source)
    opener = lines[start - 1]
    floor = _indent(opener) if opener.lstrip().startswith("-") else _indent(opener) - 1
    rx = re.compile(pattern)
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1]
        if _skipped(text):
            continue
        if _indent(text) <= floor:
            return None
        if rx.search(text):
            return number
    return None


def key_pattern(key: str) -> str:
    """A YAML key at the start of a line, quoted or not."""
    name = re.escape(key)
    return rf"^\s*(-\s+)?[\"']?{name}[\"']?\s*:"


def kind_line(source: str | None, kind: str) -> int | None:
    return find_line(source, rf"^\s*kind:\s*[\"']?{re.escape(kind)}[\"']?\s*$")


def list_items(source: str | None, key: str) -> list[ListItem]:
    """Every item of every block list under a `key:` line (e.g. `containers:`), in template order.
    An item runs from its `- ` to the next line (directives and comments aside) indented no deeper;
    `- ` may sit at the key's own indent, as YAML allows."""
    if not source:
        return []
    lines = git_lines(source)
    opener = re.compile(rf"^\s*(-\s+)?[\"']?{re.escape(key)}[\"']?\s*:\s*(#.*)?$")
    return [
        item
        for number, text in enumerate(lines, 1)
        if opener.match(text)
        for item in _items(lines, number, key)
    ]


def _items(lines: list[str], opener: int, key: str) -> Iterator[ListItem]:
    floor = _indent(lines[opener - 1])
    starts: list[int] = []
    end = opener
    for number in range(opener + 1, len(lines) + 1):
        text = lines[number - 1]
        if _skipped(text):
            continue
        dash = _DASH.match(text)
        column = _indent(text)
        if column < floor or (column == floor and dash is None):
            break
        if dash is not None and column == _indent(lines[(starts or [number])[0] - 1]):
            starts.append(number)
        end = number
    ends = [*(s - 1 for s in starts[1:]), end] if starts else []
    for start, last in zip(starts, ends, strict=True):
        yield ListItem(key, start, _last_line(lines, start, last), _item_name(lines, start, last))


def _last_line(lines: list[str], start: int, last: int) -> int:
    """`last`, stepped back over the directives and comments between this item and the next."""
    while last > start and _skipped(lines[last - 1]):
        last -= 1
    return last


def _item_name(lines: list[str], start: int, end: int) -> str | None:
    """The value of the item's own `name:` key: on its `- ` line, or on a line at its keys' column."""
    dash = _DASH.match(lines[start - 1])
    if dash is None or dash["rest"] is None:
        return None
    column = len(dash["indent"]) + 1 + len(dash["gap"])
    for number in range(start, end + 1):
        text = lines[number - 1]
        rest = dash["rest"] if number == start else text[column:]
        if number > start and (_indent(text) != column or _skipped(text)):
            continue
        found = NAME_RE.match(rest)
        if found:
            return found["value"].rstrip().strip("\"'")
    return None


def container_items(source: str | None) -> list[ListItem]:
    """The items of every container list of the template (init containers' first)."""
    return [item for key in LIST_KEYS.values() for item in list_items(source, key)]


def container_item(
    items: list[ListItem], container: str, role: str | None = None
) -> ListItem | None:
    """The item of the container named `container` (in the list of `role` when given): the one
    naming it literally, else the only item whose name is templated (no other can be it)."""
    if role in LIST_KEYS:
        items = [item for item in items if item.key == LIST_KEYS[role]]
    named = [item for item in items if item.name == container]
    templated = [item for item in items if item.name is not None and "{{" in item.name]
    if named:
        return named[0]
    return templated[0] if len(templated) == 1 else None


def container_line(
    source: str | None, container: str, *patterns: str, role: str | None = None
) -> int | None:
    """The line in a container's list item matching the first of `patterns` that matches; else the
    item's first line; None when no item can be told to be it. In a template holding no container
    list: the first of `patterns` in the block of a `- name: <container>` line, else that line."""
    items = container_items(source)
    if not items:
        return _named_line(source, container, patterns)
    item = container_item(items, container, role)
    if item is None or source is None:
        return None
    for pattern in patterns:
        line = _item_line(source, item, pattern)
        if line is not None:
            return line
    return item.start


def _item_line(source: str, item: ListItem, pattern: str) -> int | None:
    rx = re.compile(pattern)
    lines = git_lines(source)
    return next((n for n in range(item.start, item.end + 1) if rx.search(lines[n - 1])), None)


def _named_line(source: str | None, container: str, patterns: tuple[str, ...]) -> int | None:
    named = container_name_line(source, container)
    # Only a list item: a bare `name: <container>` is as likely the workload's own metadata name.
    if named is None or source is None or not git_lines(source)[named - 1].lstrip().startswith("-"):
        return None
    for pattern in patterns:
        line = block_line(source, named, pattern)
        if line is not None:
            return line
    return named


def nested_line(source: str | None, *keys: str) -> int | None:
    """The line of the last of `keys`, each found inside the block of the one before; as far as the
    chain goes when a later key is not written literally (e.g. it comes from `toYaml`)."""
    line = find_line(source, key_pattern(keys[0]))
    for key in keys[1:]:
        inner = block_line(source, line, key_pattern(key))
        if inner is None:
            return line
        line = inner
    return line
