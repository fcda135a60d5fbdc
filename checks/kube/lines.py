"""The template line of an object's field: in the template's document (`---` apart) that renders
the object's kind, each key of the path found in the block of the one before, a list item by its
`- name:` or its place; as far as the path is written literally (a value from `toYaml` stops it
at the line that writes it)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.textlines import git_lines
from checks.kit.template_lines import block_line, key_pattern

_SEPARATOR = re.compile(r"^---")
_DASH = re.compile(r"^(\s*)-(\s|$)")


def field_line(
    source: str | None, kind: str, name: str, path: Sequence[str | int], body: Mapping[str, Any]
) -> int | None:
    """The 1-based line of the field at `path` of the object (`kind`, `name`) in `source`."""
    if not source:
        return None
    lines = git_lines(source)
    start, end = _document(lines, kind, name)
    text = "\n".join(lines[start:end])
    top = str(path[0]) if path else "kind"
    line = _top_key(lines[start:end], top, body.get(top) if len(path) == 1 else None)
    node: Any = body
    for before, step in zip(path, path[1:], strict=False):
        node = node.get(before) if isinstance(node, Mapping) else _item(node, before)
        found = _step(text, line, step, node)
        if found is None:
            break
        line = found
    return line + start if line is not None else None


def _document(lines: list[str], kind: str, name: str) -> tuple[int, int]:
    """The lines [start, end) of the document holding the object: the one whose `kind:` is its
    kind, the one that also names it where several are of that kind."""
    cuts = [i for i, text in enumerate(lines) if _SEPARATOR.match(text)]
    spans = list(zip([0, *(c + 1 for c in cuts)], [*cuts, len(lines)], strict=True))
    kind_rx = re.compile(rf"^\s*kind:\s*[\"']?{re.escape(kind)}[\"']?\s*(#.*)?$")
    of_kind = [s for s in spans if any(kind_rx.match(t) for t in lines[s[0] : s[1]])]
    named = [s for s in of_kind if any(name in t for t in lines[s[0] : s[1]])]
    return (named or of_kind or [(0, len(lines))])[0]


def _top_key(lines: list[str], key: str, value: Any = None) -> int | None:
    """The line of a key of the object itself: the least indented; of those, one that writes
    `value` where it is a string (`apiVersion: v1beta1` of a template choosing between two)."""
    rx = re.compile(key_pattern(key))
    hits = [(len(t) - len(t.lstrip(" ")), n) for n, t in enumerate(lines, 1) if rx.match(t)]
    if isinstance(value, str):
        literal = re.compile(key_pattern(key) + rf"\s*[\"']?{re.escape(value)}[\"']?\s*(#.*)?$")
        hits = [hit for hit in hits if literal.match(lines[hit[1] - 1])] or hits
    return min(hits)[1] if hits else None


def _item(node: Any, index: str | int) -> Any:
    if isinstance(node, list) and isinstance(index, int) and index < len(node):
        return node[index]
    return None


def _step(text: str, line: int | None, step: str | int, node: Any) -> int | None:
    """The line of `step` inside the block opened at `line`: a key, or the list item `node[step]`
    (by its `- name:`, else by counting the block's items)."""
    if line is None:
        return None
    if isinstance(step, str):
        return block_line(text, line, key_pattern(step))
    item = node[step] if isinstance(node, list) and step < len(node) else None
    name = item.get("name") if isinstance(item, Mapping) else None
    if isinstance(name, str) and name:
        named = block_line(
            text, line, rf"^\s*-\s+[\"']?name[\"']?:\s*[\"']?{re.escape(name)}[\"']?\s*$"
        )
        if named is not None:
            return named
    return _nth_item(git_lines(text), line, step)


def _nth_item(lines: list[str], line: int, index: int) -> int | None:
    floor = len(lines[line - 1]) - len(lines[line - 1].lstrip(" "))
    column, seen = None, -1
    for number in range(line + 1, len(lines) + 1):
        text = lines[number - 1]
        stripped = text.strip()
        if not stripped or stripped.startswith(("{{", "#")):
            continue
        indent = len(text) - len(text.lstrip(" "))
        dash = _DASH.match(text)
        if indent < floor or (indent == floor and dash is None):
            return None
        if dash is not None and (column is None or indent == column):
            column = indent
            seen += 1
            if seen == index:
                return number
    return None
