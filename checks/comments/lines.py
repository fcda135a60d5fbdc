"""A template read as lines for its comments: which lines are comments, which lines define a
workload or one of its containers, and where a changed field is written.

Templates are not YAML until rendered, so this reads them as indented text, as the other checks
find their lines (checks/kit/template_lines.py): a container is its list item, a workload its
`---` section; a field is found key by key, each inside the block of the one before."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.textlines import git_lines
from checks.kit.template_lines import (
    ListItem,
    block_line,
    container_item,
    container_items,
    key_pattern,
)

# A whole-line YAML comment; a trailing one after whitespace, with no quote before it that could
# hold the `#` (`color: "#fff"`).
_HASH_LINE = re.compile(r"^\s*#(?P<text>.*)$")
_TRAILING = re.compile(r"^[^#'\"]*?\s#(?P<text>.*)$")
_OPEN = re.compile(r"\{\{-?\s*/\*")
_CLOSE = re.compile(r"\*/\s*-?\}\}")
_SEPARATOR = re.compile(r"^---(\s|$)")


@dataclass(frozen=True)
class Comment:
    line: int  # 1-based
    text: str  # the comment's words, without `#` or `{{/* */}}`
    whole_line: bool  # nothing but the comment on its line


@dataclass(frozen=True)
class Span:
    """Lines `start` to `end` (1-based, inclusive) define one object; `opener` is the line its
    keys are found under: a container's `- name:`, or 0 for a workload's top level."""

    start: int
    end: int
    opener: int = 0


def comments(source: str) -> dict[int, Comment]:
    """Every comment line of the template, by line number: `#` comments (whole-line or trailing)
    and `{{/* */}}` template comments, a multi-line one on each of its lines."""
    found: dict[int, Comment] = {}
    inside = False
    for number, text in enumerate(git_lines(source), start=1):
        if inside:
            end = _CLOSE.search(text)
            inside = end is None
            body = text[: end.start()] if end else text
            found[number] = Comment(number, body.strip(), not end or not text[end.end() :].strip())
            continue
        opened = _OPEN.search(text)
        if opened:
            rest = text[opened.end() :]
            end = _CLOSE.search(rest)
            inside = end is None
            body = rest[: end.start()] if end else rest
            whole = not text[: opened.start()].strip()
            found[number] = Comment(number, body.strip(), whole)
        elif hashed := _HASH_LINE.match(text) or _TRAILING.match(text):
            found[number] = Comment(number, hashed["text"].strip(), text.lstrip().startswith("#"))
    return found


def container_span(
    source: str,
    notes: dict[int, Comment],
    name: str,
    role: str,
    items: list[ListItem] | None = None,
) -> Span | None:
    """The lines of the container's list item, with the comments right above its `- name:`
    (`items`: the template's container items, when already read)."""
    item = container_item(container_items(source) if items is None else items, name, role)
    if item is None:
        return None
    start = item.start
    while start - 1 in notes and notes[start - 1].whole_line:
        start -= 1
    return Span(start, item.end, item.start)


def workload_span(source: str, kind: str) -> Span | None:
    """The `---` section of the template that holds the only `kind: <kind>` line at its top level;
    None when no section, or several, could be it."""
    lines = git_lines(source)
    bounds = [0, *(n for n, t in enumerate(lines, 1) if _SEPARATOR.match(t)), len(lines) + 1]
    kind_rx = re.compile(rf"^kind:\s*[\"']?{re.escape(kind)}[\"']?\s*(#.*)?$")
    spans = [
        Span(first + 1, last - 1)
        for first, last in zip(bounds, bounds[1:], strict=False)
        if any(kind_rx.match(lines[n - 1]) for n in range(first + 1, last))
    ]
    return spans[0] if len(spans) == 1 else None


def field_lines(source: str, span: Span, keys: Sequence[str]) -> list[int]:
    """The lines of `keys` in `span`, each inside the block of the one before (the first at the
    span's top level when it has no opener); as far as the chain goes when a key is not written
    literally (it comes from `toYaml`, or from a partial)."""
    lines = git_lines(source)
    line: int | None = span.opener
    rest = list(keys)
    found: list[int] = []
    if not span.opener and rest:
        top = re.compile(key_pattern(rest.pop(0)).replace(r"^\s*", "^", 1))
        line = next((n for n in range(span.start, span.end + 1) if top.search(lines[n - 1])), None)
        found += [line] if line else []
    for key in rest:
        line = block_line(source, line, key_pattern(key))
        if line is None or line > span.end:
            break
        found.append(line)
    return found
