"""The pieces of text references are read in: a paragraph of a prose file or of PR text, a comment
block or one line of code elsewhere. Definitions (a heading line) and examples (fenced code) are
blanked, so that only what refers is left."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from bot.lru import BoundedCache
from bot.textlines import git_lines
from checks.headings.filetext import FileText
from checks.headings.refs import Unit, blank, parse_unit
from checks.headings.text import (
    MAX_MEMO_CHARS,
    atx_text,
    block_comment_lines,
    caps_heading_span,
    collapse,
    comment_bodies,
    comment_heading,
    fenced_lines,
    headings_in,
    line_comment,
)

# Files read as prose: every line of a paragraph counts, not only comments.
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc")

T = TypeVar("T")


def file_units(
    file: FileText, wanted: frozenset[int] | None = None, holding: re.Pattern[str] | None = None
) -> list[Unit]:
    """The units of a file that hold a wanted line (every unit when `wanted` is None), and with
    `holding`, text it finds: paragraphs of a prose file, comment blocks and single code lines
    elsewhere. Heading lines are definitions, not references, and are blanked."""
    markdown, prose = file.markdown, file.path.lower().endswith(PROSE_SUFFIXES)
    if wanted is not None and not prose and file.stands_alone:
        pieces = _wanted_code_pieces(file.lines, wanted)
    elif wanted is not None and not prose and not markdown:
        pieces = _wanted_stretch_pieces(file, wanted)
    else:
        pieces = _pieces(markdown, prose, file.text)
    units = []
    for start, block, bare in pieces:
        numbers = range(start + 1, start + 1 + len(block))
        touched = wanted is None or any(n in wanted for n in numbers)
        if touched and (holding is None or holding.search("\n".join(block))):
            units.append(parse_unit(block, start + 1, bare))
    return units


def _wanted_code_pieces(lines: Sequence[str], wanted: frozenset[int]) -> tuple[Piece, ...]:
    """The pieces _code_pieces cuts that hold a wanted line, in its order (comment blocks, then
    code lines), read from the wanted lines and the comment lines around them: where
    lines_stand_alone, no other line can change them."""
    bodies: dict[int, str | None] = {}

    def body(i: int) -> str | None:
        if i not in bodies:
            bodies[i] = line_comment(lines[i])
        return bodies[i]

    blocks: list[Piece] = []
    code: list[Piece] = []
    covered = 0  # lines before this index are in a block found already
    for i in sorted(n - 1 for n in wanted if 0 < n <= len(lines)):
        if body(i) is None:
            if lines[i]:
                code.append((i, (lines[i],), False))
            continue
        if i < covered:
            continue
        lo, hi = i, i + 1
        while lo > 0 and body(lo - 1) is not None:
            lo -= 1
        while hi < len(lines) and body(hi) is not None:
            hi += 1
        blocks.append((lo, tuple(_blanked(lines[j], bodies[j] or "") for j in range(lo, hi)), True))
        covered = hi
    return (*blocks, *code)


def _wanted_stretch_pieces(file: FileText, wanted: frozenset[int]) -> tuple[Piece, ...]:
    """The pieces _code_pieces cuts that hold a wanted line, in its order, where block comments
    tie lines together (a template's `{{/* */}}`): a wanted comment line is cut with the stretch of
    comment lines around it, up to the lines outside every block comment that hold none. Nothing
    carries across such a line (it ends a run of comment lines, no block is open there, and it is
    a piece of code alone), so a stretch cuts as it does in the whole file."""
    lines = file.lines
    spans = block_comment_lines(file.text)
    starts = [first for first, _ in spans]

    def free(i: int) -> bool:  # outside every block comment, and no comment line
        k = bisect.bisect_right(starts, i) - 1
        return (k < 0 or spans[k][1] < i) and line_comment(lines[i]) is None

    comments: list[Piece] = []
    code: list[Piece] = []
    done = -1  # the last line of the stretches cut so far
    for i in sorted(n - 1 for n in wanted if 0 < n <= len(lines)):
        if i <= done:
            continue
        if free(i):
            if lines[i]:
                code.append((i, (lines[i],), False))
            continue
        lo, hi = i, i
        while lo > 0 and not free(lo - 1):
            lo -= 1
        while hi + 1 < len(lines) and not free(hi + 1):
            hi += 1
        # Each line ended by its break: a stretch may end in empty lines, which git_lines keeps.
        stretch = "".join(line + "\n" for line in lines[lo : hi + 1])
        for start, block, bare in _pieces(False, False, stretch):
            (comments if bare else code).append((lo + start, block, bare))
        done = hi
    return (*comments, *sorted(code))


def _blanked(line: str, body: str) -> str:
    """A comment line's text as _code_pieces reads it: its ALL-CAPS heading, if any, blanked."""
    span = caps_heading_span(body)
    if span is None or not collapse(body[span[0] : span[1]]):
        return body
    offset = line.find(body)
    return line_comment(blank(line, offset + span[0], offset + span[1])) or ""


Piece = tuple[int, tuple[str, ...], bool]  # (index of its first line, its lines, read as prose)


def _pieces(markdown: bool, prose: bool, text: str) -> tuple[Piece, ...]:
    """The file cut into units' lines, by its text, across reviews (as its headings are)."""
    key = (markdown, prose, text)
    found = _PIECES.get(key)
    if found is None:
        found = (len(text), _cut(markdown, prose, text))
        _PIECES.put(key, found)
    return found[1]


_PIECES: BoundedCache[tuple[bool, bool, str], tuple[int, tuple[Piece, ...]]] = BoundedCache(
    MAX_MEMO_CHARS, lambda entry: 2 * entry[0]
)


def _cut(markdown: bool, prose: bool, text: str) -> tuple[Piece, ...]:
    blanked = _blank_headings(markdown, text)
    if markdown:
        blanked = _blank_fences(blanked)
    if prose:
        blocks = _runs([(i, line.strip() != "") for i, line in enumerate(blanked)], blanked)
        if markdown:
            blocks = [row for start, block in blocks for row in _table_rows(start, block)]
        return tuple((start, tuple(block), True) for start, block in blocks)
    return _code_pieces(markdown, "\n".join(blanked))


def _table_rows(start: int, block: list[str]) -> list[tuple[int, list[str]]]:
    """A paragraph of Markdown, a table in it cut into its rows, each a unit: a reader reads a row
    across, never on into the next, so a quote in one row is not paired with a file another names
    (in helm-docs' table of values, a default's quotes and another key's `values.yaml`). And an
    unchanged row of a regenerated table is not read again (a table of 800 rows is one paragraph
    of 95 KB)."""
    for k in range(1, len(block)):
        if "|" in block[k - 1] and "|" in block[k] and TABLE_DELIMITER_RE.fullmatch(block[k]):
            rows = [(start + i, [line]) for i, line in enumerate(block) if i >= k - 1]
            return ([(start, block[: k - 1])] if k > 1 else []) + rows
    return [(start, block)]


# The row under a GitHub table's header: cells of dashes, each maybe with colons for alignment.
# Possessive: the runs of spaces on either side of a `|` never give back what the other may take
# (a line of spaces was tried at every split of it, quadratic).
TABLE_DELIMITER_RE = re.compile(
    r"[ \t]*+\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+"
)


def _blank_headings(markdown: bool, text: str) -> list[str]:
    out = git_lines(text)
    bodies = comment_bodies(text, markdown)
    for heading in headings_in(markdown, text, bodies):
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


def _code_pieces(markdown: bool, text: str) -> tuple[Piece, ...]:
    bodies = comment_bodies(text, markdown)
    lines = git_lines(text)
    pieces: list[Piece] = []
    for start, block in _runs([(i, b is not None) for i, b in enumerate(bodies)], bodies):
        pieces.append((start, tuple(b or "" for b in block), True))
    pieces += [(i, (lines[i],), False) for i, b in enumerate(bodies) if b is None and lines[i]]
    return tuple(pieces)


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
    if atx_text(line) is not None:
        return True
    words = line.strip().rstrip(":")
    return bool(words) and comment_heading(words) == collapse(words)


def prose_units(text: str) -> list[Unit]:
    """Paragraphs of a PR title, description or commit message, without its fenced code and its
    own headings."""
    lines = ["" if _own_heading(line) else line for line in _blank_fences(git_lines(text))]
    blocks = _runs([(i, line.strip() != "") for i, line in enumerate(lines)], lines)
    return [parse_unit(block, None) for _, block in blocks]
