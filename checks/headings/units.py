"""The pieces of text references are read in: a paragraph of a prose file or of PR text, a comment
block or one line of code elsewhere. Definitions (a heading line) and examples (fenced code) are
blanked, so that only what refers is left."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from checks.headings.refs import Unit, blank, parse_unit
from checks.headings.text import (
    ATX_RE,
    caps_heading_span,
    collapse,
    comment_bodies,
    comment_heading,
    fenced_lines,
    find_headings,
    is_markdown,
)

# Files read as prose: every line of a paragraph counts, not only comments.
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc")

T = TypeVar("T")


def file_units(path: str, text: str, wanted: frozenset[int] | None = None) -> list[Unit]:
    """The units of a file that hold a wanted line (every unit when `wanted` is None): paragraphs of
    a prose file, comment blocks and single code lines elsewhere. Heading lines are definitions, not
    references, and are blanked."""
    lines = text.splitlines()
    blanked = _blank_headings(path, lines)
    if is_markdown(path):
        blanked = _blank_fences(blanked)
    if path.lower().endswith(PROSE_SUFFIXES):
        blocks = _runs([(i, line.strip() != "") for i, line in enumerate(blanked)], blanked)
        pieces = [(start, block, True) for start, block in blocks]
    else:
        pieces = _code_pieces(path, "\n".join(blanked))
    units = []
    for start, block, bare in pieces:
        numbers = range(start + 1, start + 1 + len(block))
        if wanted is None or any(n in wanted for n in numbers):
            units.append(parse_unit(block, start + 1, bare))
    return units


def _blank_headings(path: str, lines: list[str]) -> list[str]:
    out = list(lines)
    bodies = comment_bodies("\n".join(lines), is_markdown(path))
    for heading in find_headings(path, "\n".join(lines)):
        index = heading.line - 1
        body = bodies[index]
        span = caps_heading_span(body) if body is not None else None
        if span is not None and body is not None:
            offset = out[index].find(body)
            if offset >= 0:
                out[index] = blank(out[index], offset + span[0], offset + span[1])
                continue
        out[index] = ""
        if index + 1 < len(out) and set(out[index + 1].strip()) <= {"=", "-"}:
            out[index + 1] = ""  # the setext underline
    return out


def _code_pieces(path: str, text: str) -> list[tuple[int, list[str], bool]]:
    bodies = comment_bodies(text, is_markdown(path))
    lines = text.splitlines()
    pieces: list[tuple[int, list[str], bool]] = []
    for start, block in _runs([(i, b is not None) for i, b in enumerate(bodies)], bodies):
        pieces.append((start, [b or "" for b in block], True))
    pieces += [(i, [lines[i]], False) for i, b in enumerate(bodies) if b is None and lines[i]]
    return pieces


def _runs(flags: Iterable[tuple[int, bool]], items: Sequence[T]) -> list[tuple[int, list[T]]]:
    """Maximal runs of consecutive flagged items: (index of the first, the items)."""
    runs: list[tuple[int, list[T]]] = []
    previous = -2
    for index, flag in flags:
        if not flag:
            continue
        if index == previous + 1:
            runs[-1][1].append(items[index])
        else:
            runs.append((index, [items[index]]))
        previous = index
    return runs


def _blank_fences(lines: list[str]) -> list[str]:
    """Fenced code is an example (SQL, a pasted error, a shell session), not prose that refers."""
    fenced = fenced_lines(lines)
    return ["" if i in fenced else line for i, line in enumerate(lines)]


def _own_heading(line: str) -> bool:
    """A line that is a heading of the text itself (`## Summary`, `WHAT CHANGED:`), not a quote."""
    if ATX_RE.match(line):
        return True
    words = line.strip().rstrip(":")
    return bool(words) and comment_heading(words) == collapse(words)


def prose_units(text: str) -> list[Unit]:
    """Paragraphs of a PR title, description or commit message, without its fenced code and its
    own headings."""
    lines = ["" if _own_heading(line) else line for line in _blank_fences(text.splitlines())]
    blocks = _runs([(i, line.strip() != "") for i, line in enumerate(lines)], lines)
    return [parse_unit(block, None) for _, block in blocks]
