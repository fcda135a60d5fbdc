"""What a reference to a heading is: a heading's text (bare ALL-CAPS, or in quotes or backticks)
together with a file named in the same sentence, comment block or paragraph, or with `(above)` /
`(below)`. Pure text in, values out; whether a named file exists is asked of the caller (`keep`)."""

from __future__ import annotations

import bisect
import functools
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.lru import BoundedCache
from checks.headings.forms import Pairing, is_explicit
from checks.headings.text import (
    DASHES,
    MAX_MEMO_CHARS,
    MIN_CAPITALS,
    caps_heading_span,
    collapse,
    qualifies,
)

# A file named with its repository: a blob URL, or `owner/name:path` (GitHub owner names hold no
# dot, which keeps image references such as `ghcr.io/acme:1.2` out).
BLOB_URL_RE = re.compile(
    r"https://github\.com/([A-Za-z0-9-]+/[\w.-]+)/blob/[^/\s]+/([^\s#?)\]>\"'`]+)"
)
_PATH = r"(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
QUALIFIED_RE = re.compile(rf"(?<![\w./-])([A-Za-z0-9-]+/[\w.-]+):({_PATH})(?![\w/-])")
# A repository path or a basename, ending in a letter-led extension (`values.yaml`, not `1.2.3`).
PATH_RE = re.compile(rf"(?<![\w./:@-])({_PATH})(?![\w/-])")

# Each quote reads on to the next mark that can close it and no further: a curly quote holds no
# other opening curly quote, so a line of `“` is read once, not from each of them to its end.
QUOTED_RE = re.compile(r'"([^"\n]+)"|“([^“”\n]+)”|`([^`\n]+)`|(?<!\w)\'([^\'\n]+)\'(?!\w)')
# Bare ALL-CAPS prose: tokens of capitals, digits and joiners, never glued to a lower-case letter.
# Possessive throughout: nothing follows that could want a token back, and a run of a megabyte of
# capitals is then read without the engine keeping a way back through each of its tokens.
BARE_RE = re.compile(r"(?<![\w`'\"“-])(?:[A-Z0-9][A-Z0-9'’/&-]*+(?![a-z_])[ \t]*+)++")
# A Markdown heading is quoted by any case when the words say it is a section: `FILE § Title`,
# `the "Title" section of FILE`.
SECTION_SIGN_RE = re.compile(r"§[ \t]*([^\s\"“`][^\n.,;:()\"”`]*)")
SECTION_BEFORE_RE = re.compile(r"(?:\b(?:section|heading)|§)[ \t]*$", re.IGNORECASE)
SECTION_AFTER_RE = re.compile(r"^[ \t]*(?:section|heading)\b", re.IGNORECASE)
SIDE_RE = re.compile(r"[ \t]*\((above|below)\)")
LIST_ITEM_RE = re.compile(r"\n[ \t]*(?:[-*+]|\d+[.)])[ \t]")
SENTENCE_END_RE = re.compile(r"[.!?](?=\s)")
_BREAK_RE = re.compile("\n")


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
    # Written in a reference construction (checks/headings/forms.py): only these may fail a PR.
    explicit: bool = False


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
        if self.first_line is None:
            return None
        return self.first_line + bisect.bisect_left(self._breaks, offset)  # the breaks before it

    @functools.cached_property
    def _breaks(self) -> list[int]:
        """Where the text's lines end: a mention's line is looked up, not counted to."""
        return [m.start() for m in _BREAK_RE.finditer(self.text)]

    def has_list_item(self, low: int, high: int) -> bool:
        """Whether a list item starts in `text[low:high]` (LIST_ITEM_RE.search(text, low, high)),
        told from the items found once: a paragraph of thousands of lines quoting headings asks for
        each quote, where a search each read on to the file it names (quadratic)."""
        k = bisect.bisect_left(self._items[0], low)
        return k < len(self._items[0]) and self._items[1][k] <= high

    @functools.cached_property
    def _items(self) -> tuple[list[int], list[int]]:
        found = list(LIST_ITEM_RE.finditer(self.text))
        return [m.start() for m in found], [m.end() for m in found]

    def sentence_of(self, offset: int) -> int:
        return bisect.bisect_left(self.sentence_ends, offset)  # the ends before it (in order)

    def moved(self, first_line: int | None) -> Unit:
        """The same unit read at another line (half what dataclasses.replace costs, which a
        whole README's paragraphs, read again at their new places, paid a hundred thousand
        times)."""
        return Unit(self.text, first_line, self.mentions, self.files, self.sentence_ends)


def parse_unit(lines: Sequence[str], first_line: int | None, bare: bool = True) -> Unit:
    """The unit of these lines, starting at `first_line`. What it reads is remembered by its lines
    alone, for the same paragraphs are read again and again, often moved: a README's, by every
    review that removes a heading the index says it may quote (grafana's last 200 changes read
    177,000 units, 32,000 of them distinct), and helm-docs' table of values, one paragraph of 800
    lines and 95 KB (~20 ms a read), by each change that regenerates it."""
    key = (tuple(lines), bare)
    found = _UNITS.get(key)
    if found is None:
        found = _parse_unit(key[0], first_line, bare)
        _UNITS.put(key, found)
    return found if found.first_line == first_line else found.moved(first_line)


def _parse_unit(lines: tuple[str, ...], first_line: int | None, bare: bool) -> Unit:
    text = "\n".join(lines)
    if not _may_mention(text, bare):
        return Unit(text, first_line, (), (), ())  # no heading quoted: no file to look for either
    files, rest = _files(text)
    # On a line of code a quote is a string literal first: read loosely, like bare prose.
    mentions, rest = _quoted(text, rest, loose=not bare)
    signs = _section_signs(rest)
    mentions += signs
    if bare:
        # Capitals after a `§` are that mention already, not a second one.
        mentions += _bare(text, _blank_spans(rest, signs))
    ends = tuple(m.start() for m in SENTENCE_END_RE.finditer(rest))
    return Unit(text, first_line, tuple(sorted(mentions, key=lambda m: m.start)), files, ends)


# Units by their lines, weighed by their text (held by the key, the unit and a few spans of it).
_UNITS: BoundedCache[tuple[tuple[str, ...], bool], Unit] = BoundedCache(
    2 * MAX_MEMO_CHARS, lambda unit: 128 + 3 * len(unit.text)
)


def _may_mention(text: str, bare: bool) -> bool:
    """Whether `text` can hold a mention at all: a quote, a `§`, or (read as prose) the capitals
    of a bare heading. Most lines of code a PR adds hold none, and their files are then not read
    for (each named file would be looked up in the tree)."""
    if any(c in text for c in _MENTION_MARKS):
        return True
    return bare and sum(map(text.count, string.ascii_uppercase)) >= MIN_CAPITALS


# What every quote (QUOTED_RE) and section sign (SECTION_SIGN_RE) holds; a bare heading's capitals
# are ASCII (BARE_RE), MIN_CAPITALS of them at least (text.qualifies).
_MENTION_MARKS = "\"“`'§"


def blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _blank_spans(text: str, spans: Sequence[_Span]) -> str:
    return blank_all(text, [(span.start, span.end) for span in spans])


def blank_all(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """`blank` of every span, in one pass over the text: a line of code may name a hundred
    thousand paths (a crafted values file of a megabyte), where a copy per span takes minutes."""
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        out += (text[at:start], " " * (end - start))
        at = end
    return "".join(out) + text[at:] if out else text


def _files(text: str) -> tuple[tuple[_FileSpan, ...], str]:
    found: list[_FileSpan] = []
    rest = text
    for pattern in (BLOB_URL_RE, QUALIFIED_RE, PATH_RE):
        new = []
        for m in pattern.finditer(rest):
            repo, path = (m.group(1), m.group(2)) if pattern is not PATH_RE else (None, m.group(1))
            new.append(_FileSpan(m.start(), m.end(), FileRef(_clean_path(path), repo)))
        found += new
        rest = _blank_spans(rest, new)  # the next pattern reads what this one left
    return tuple(sorted(found, key=lambda f: f.start)), rest


def _clean_path(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _quoted(text: str, rest: str, loose: bool) -> tuple[list[_Mention], str]:
    mentions: list[_Mention] = []
    quotes = []
    for m in QUOTED_RE.finditer(rest):
        content = next(g for g in m.groups() if g is not None)
        heading = _caps_prefix(content) or _section_title(text, m.start(), m.end(), content)
        if heading:
            mentions.append(
                _Mention(m.start(), m.end(), heading, True, loose, _side(text, m.end()))
            )
        quotes.append((m.start(), m.end()))
    return mentions, blank_all(rest, quotes)


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
    named = _section_before(_line_before(text, start)) or SECTION_AFTER_RE.match(
        _line_after(text, end)
    )
    title = collapse(content.lstrip("# "))  # `## Upgrading` names the heading `Upgrading`
    return title if named and title else None


# What the section patterns read around a quote: its line's last word before it, or first after,
# and the character beyond. A line of code may be a dashboard's JSON, 30,000 characters quoting
# hundreds of strings, or a crafted megabyte: the line is never copied or searched whole per quote.
_SECTION_WORD = len("section") + 1
_WINDOW = 64
_NOT_BLANK_RE = re.compile(r"[^ \t]")


def _line_before(text: str, start: int) -> str:
    """What of the line before `start` the before-pattern can read: `text[line_start:start]` with
    its trailing spaces and tabs, and at least _SECTION_WORD characters before them (or all)."""
    low = max(0, start - _WINDOW)
    cut = text.rfind("\n", low, start)
    window = text[cut + 1 if cut >= 0 else low : start]
    if cut >= 0 or low == 0 or len(window.rstrip(" \t")) >= _SECTION_WORD:
        return window
    line_start = text.rfind("\n", 0, low) + 1  # a long run of spaces before the quote: rare
    return text[line_start:start]


def _line_after(text: str, end: int) -> str:
    """What of the line after `end` the after-pattern can read: its leading spaces and tabs, and
    the _SECTION_WORD characters after them, the line's end not passed."""
    word = _NOT_BLANK_RE.search(text, end)
    stop = len(text) if word is None else word.start() + _SECTION_WORD
    line_end = text.find("\n", end, stop)
    return text[end : line_end if line_end >= 0 else stop]


def _section_before(before: str) -> bool:
    """Whether `before` (a line up to a quote) ends by naming a section: SECTION_BEFORE_RE, asked of
    its last word and the character before it only."""
    word = before.rstrip(" \t")
    return SECTION_BEFORE_RE.search(word[-_SECTION_WORD:]) is not None


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
    found: list[Reference] = []
    wanted = [m for m in unit.mentions if lines is None or unit.line_of(m.start) in lines]
    if not wanted:
        return found  # no file named in the unit is looked up
    files = [f for f in unit.files if keep(f.file)]
    everywhere = _Spans(files)
    by_sentence: dict[int, list[_FileSpan]] = {}
    for f in files:
        by_sentence.setdefault(unit.sentence_of(f.start), []).append(f)
    sentences = {n: _Spans(spans) for n, spans in by_sentence.items()}
    for mention in wanted:
        line = unit.line_of(mention.start)
        pool = sentences.get(unit.sentence_of(mention.start), everywhere)
        span = None if mention.side else pool.nearest(mention)
        explicit = mention.side is not None or (span is not None and _explicit(unit, mention, span))
        file = span.file if span is not None else None
        found.append(
            Reference(
                mention.text, line, file, mention.side, mention.quoted, mention.loose, explicit
            )
        )
    return found


class _Spans:
    """Files named in a unit, in order (they never overlap), for the one nearest a mention: its own
    sentence's first, else any. Nearest is the least gap, an equal one going to the file after; a
    file inside or across the mention counts as after it, by how far it starts before the
    mention's end. Found by bisection: a line may name thousands of files and quote thousands of
    headings."""

    def __init__(self, spans: Sequence[_FileSpan]) -> None:
        self.spans = spans
        self.ends = [f.end for f in spans]

    def nearest(self, mention: _Mention) -> _FileSpan | None:
        # Files ending by the mention's start are before it: of those, the last is nearest. Of the
        # others, the first starts soonest.
        k = bisect.bisect_right(self.ends, mention.start)
        before = self.spans[k - 1] if k > 0 else None
        after = self.spans[k] if k < len(self.spans) else None
        if before is None or after is None:
            return before or after
        if after.start - mention.end <= mention.start - before.end:
            return after
        return before


def _explicit(unit: Unit, mention: _Mention, span: _FileSpan) -> bool:
    """One sentence, and one list item: each item of a checklist is a sentence of its own, even
    without a full stop."""
    low, high = sorted((span.start, mention.start))
    same = unit.sentence_of(span.start) == unit.sentence_of(mention.start) and not (
        unit.has_list_item(low, high)
    )
    pairing = Pairing(
        mention.start, mention.end, span.start, span.end, same, span.file.repo is not None
    )
    return is_explicit(unit.text, pairing)
