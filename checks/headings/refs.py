"""What a reference to a heading is: a heading's text (bare ALL-CAPS, or in quotes or backticks)
together with a file named in the same sentence, comment block or paragraph, or with `(above)` /
`(below)`. Pure text in, values out; whether a named file exists is asked of the caller (`keep`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from checks.headings.text import (
    DASHES,
    caps_heading_span,
    collapse,
    comment_bodies,
    find_headings,
    is_markdown,
    qualifies,
)

# Files read as prose: every line of a paragraph counts, not only comments.
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst", ".adoc")

# A file named with its repository: a blob URL, or `owner/name:path` (GitHub owner names hold no
# dot, which keeps image references such as `ghcr.io/acme:1.2` out).
BLOB_URL_RE = re.compile(
    r"https://github\.com/([A-Za-z0-9-]+/[\w.-]+)/blob/[^/\s]+/([^\s#?)\]>\"'`]+)"
)
_PATH = r"(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
QUALIFIED_RE = re.compile(rf"(?<![\w./-])([A-Za-z0-9-]+/[\w.-]+):({_PATH})(?![\w/-])")
# A repository path or a basename, ending in a letter-led extension (`values.yaml`, not `1.2.3`).
PATH_RE = re.compile(rf"(?<![\w./:@-])({_PATH})(?![\w/-])")

QUOTED_RE = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|`([^`\n]+)`|(?<!\w)\'([^\'\n]+)\'(?!\w)')
# Bare ALL-CAPS prose: tokens of capitals, digits and joiners, never glued to a lower-case letter.
BARE_RE = re.compile(r"(?<![\w`'\"“-])(?:[A-Z0-9][A-Z0-9'’/&-]*+(?![a-z_])[ \t]*)+")
# A Markdown heading is quoted by any case when the words say it is a section: `FILE § Title`,
# `the "Title" section of FILE`.
SECTION_SIGN_RE = re.compile(r"§[ \t]*([^\s\"“`][^\n.,;:()\"”`]*)")
SECTION_BEFORE_RE = re.compile(r"(?:\b(?:section|heading)|§)[ \t]*$", re.IGNORECASE)
SECTION_AFTER_RE = re.compile(r"^[ \t]*(?:section|heading)\b", re.IGNORECASE)
SIDE_RE = re.compile(r"[ \t]*\((above|below)\)")
SENTENCE_END_RE = re.compile(r"[.!?](?=\s)")

T = TypeVar("T")


@dataclass(frozen=True)
class FileRef:
    path: str  # as written: a path or a basename
    repo: str | None = None  # `owner/name` when another repository is named


@dataclass(frozen=True)
class Reference:
    text: str  # the heading as quoted, whitespace collapsed
    line: int | None  # where it was read (None in PR text)
    file: FileRef | None  # None with `side`: the same file; None without: no file named
    side: str | None = None  # "above" | "below"
    quoted: bool = False
    # Bare prose, or a quote inside a line of code (a string literal first): may carry words around
    # the heading, and is taken for a reference only when it finds or nearly finds one.
    loose: bool = False


@dataclass(frozen=True)
class _Span:
    start: int
    end: int


@dataclass(frozen=True)
class _Mention(_Span):
    text: str
    quoted: bool
    loose: bool
    side: str | None


@dataclass(frozen=True)
class _FileSpan(_Span):
    file: FileRef


@dataclass(frozen=True)
class Unit:
    """A sentence-bearing block: a comment block, a paragraph, or one line of code."""

    text: str
    first_line: int | None
    mentions: tuple[_Mention, ...]
    files: tuple[_FileSpan, ...]
    sentence_ends: tuple[int, ...]

    def line_of(self, offset: int) -> int | None:
        return (
            None if self.first_line is None else self.first_line + self.text.count("\n", 0, offset)
        )

    def sentence_of(self, offset: int) -> int:
        return sum(end < offset for end in self.sentence_ends)


def parse_unit(lines: Sequence[str], first_line: int | None, bare: bool = True) -> Unit:
    text = "\n".join(lines)
    files, rest = _files(text)
    # On a line of code a quote is a string literal first: read loosely, like bare prose.
    mentions, rest = _quoted(text, rest, loose=not bare)
    mentions += _section_signs(rest)
    if bare:
        mentions += _bare(text, rest)
    ends = tuple(m.start() for m in SENTENCE_END_RE.finditer(rest))
    return Unit(text, first_line, tuple(sorted(mentions, key=lambda m: m.start)), files, ends)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _files(text: str) -> tuple[tuple[_FileSpan, ...], str]:
    found: list[_FileSpan] = []
    rest = text
    for pattern in (BLOB_URL_RE, QUALIFIED_RE, PATH_RE):
        for m in pattern.finditer(rest):
            repo, path = (m.group(1), m.group(2)) if pattern is not PATH_RE else (None, m.group(1))
            found.append(_FileSpan(m.start(), m.end(), FileRef(_clean_path(path), repo)))
        for span in found:
            rest = _blank(rest, span.start, span.end)
    return tuple(sorted(found, key=lambda f: f.start)), rest


def _clean_path(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _quoted(text: str, rest: str, loose: bool) -> tuple[list[_Mention], str]:
    mentions: list[_Mention] = []
    for m in QUOTED_RE.finditer(rest):
        content = next(g for g in m.groups() if g is not None)
        heading = _caps_prefix(content) or _section_title(text, m.start(), m.end(), content)
        if heading:
            mentions.append(
                _Mention(m.start(), m.end(), heading, True, loose, _side(text, m.end()))
            )
        rest = _blank(rest, m.start(), m.end())
    return mentions, rest


def _caps_prefix(content: str) -> str | None:
    """The ALL-CAPS heading a quote holds: all of it, or all of it before a dash clause."""
    span = caps_heading_span(content)
    if span is None or content[: span[0]].strip():
        return None
    after = content[span[1] :].strip()
    if after and not after.startswith(DASHES) and after.strip(".,:;!?") != "":
        return None
    return collapse(content[span[0] : span[1]])


def _section_title(text: str, start: int, end: int, content: str) -> str | None:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = len(text) if (n := text.find("\n", end)) < 0 else n
    named = SECTION_BEFORE_RE.search(text, line_start, start) or SECTION_AFTER_RE.match(
        text[end:line_end]
    )
    return collapse(content) if named and content.strip() else None


def _section_signs(rest: str) -> list[_Mention]:
    mentions = []
    for m in SECTION_SIGN_RE.finditer(rest):
        title = collapse(m.group(1))
        if title:
            mentions.append(_Mention(m.start(1), m.end(), title, False, True, None))
    return mentions


def _bare(text: str, rest: str) -> list[_Mention]:
    mentions = []
    for m in BARE_RE.finditer(rest):
        words = m.group().split()
        if qualifies(words):
            end = m.start() + len(m.group().rstrip())
            mentions.append(
                _Mention(m.start(), end, " ".join(words), False, True, _side(text, end))
            )
    return mentions


def _side(text: str, end: int) -> str | None:
    m = SIDE_RE.match(text, end)
    return m.group(1) if m else None


def references(
    unit: Unit, keep: Callable[[FileRef], bool], lines: frozenset[int] | None = None
) -> list[Reference]:
    """Pair each mention with the nearest kept file, preferring its own sentence. `lines` limits the
    result to mentions on those lines (the lines a PR adds)."""
    found = []
    files = [f for f in unit.files if keep(f.file)]
    for mention in unit.mentions:
        line = unit.line_of(mention.start)
        if lines is not None and line not in lines:
            continue
        file = None if mention.side else _nearest(unit, mention, files)
        found.append(
            Reference(mention.text, line, file, mention.side, mention.quoted, mention.loose)
        )
    return found


def _nearest(unit: Unit, mention: _Mention, files: list[_FileSpan]) -> FileRef | None:
    sentence = unit.sentence_of(mention.start)
    same = [f for f in files if unit.sentence_of(f.start) == sentence]

    def gap(f: _FileSpan) -> tuple[int, int]:
        before = f.end <= mention.start
        return (mention.start - f.end if before else f.start - mention.end, before)

    pool = same or files
    return min(pool, key=gap).file if pool else None


def file_units(path: str, text: str, wanted: frozenset[int] | None = None) -> list[Unit]:
    """The units of a file that hold a wanted line (every unit when `wanted` is None): paragraphs of
    a prose file, comment blocks and single code lines elsewhere. Heading lines are definitions, not
    references, and are blanked."""
    lines = text.splitlines()
    blanked = _blank_headings(path, lines)
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
                out[index] = _blank(out[index], offset + span[0], offset + span[1])
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


def prose_units(text: str) -> list[Unit]:
    """Paragraphs of a PR title, description or commit message."""
    lines = text.splitlines()
    blocks = _runs([(i, line.strip() != "") for i, line in enumerate(lines)], lines)
    return [parse_unit(block, None) for _, block in blocks]
