"""Template lines for findings: the line inside a container's block, a selector's label, a kind.

Templates are not YAML until rendered, so this reads them as indented text: a block is the lines
indented deeper than the line that opens it, template directives (`{{ ... }}`) not ending it.
(A candidate for `bot/engine/manifests.py`, next to `container_name_line`, once that file is free.)"""

from __future__ import annotations

import re

from bot.engine.manifests import container_name_line, find_line


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def block_line(source: str | None, start: int | None, pattern: str) -> int | None:
    """The first line matching `pattern` in the block opened at line `start` (1-based), or None. A
    list item (`- name: x`) opens the block of its whole entry."""
    if not source or start is None:
        return None
    lines = source.splitlines()
    opener = lines[start - 1]
    floor = _indent(opener) if opener.lstrip().startswith("-") else _indent(opener) - 1
    rx = re.compile(pattern)
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1]
        stripped = text.strip()
        if not stripped or stripped.startswith(("{{", "#")):
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


def container_line(source: str | None, container: str, *patterns: str) -> int | None:
    """The line in a container's block matching the first of `patterns` that matches; else the line
    naming the container; None when the template does not name it literally."""
    named = container_name_line(source, container)
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
