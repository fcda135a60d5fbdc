"""What a heading is: an ALL-CAPS heading at the start of a comment in any text file, and a
Markdown ATX or setext heading of any case. Pure text in, values out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.lru import BoundedCache
from bot.textlines import git_lines
from bot.textsearch import find_token

# Files whose `#` lines are Markdown headings rather than comments.
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")

# A whole-line comment: `#` (not a shebang), `//`, or a `--` SQL/Lua comment followed by a space.
LINE_COMMENT_RE = re.compile(r"^\s*(?:#+(?!!)|//+|--(?=\s|$))[ \t]?")
# Block comments that may span lines: Helm's `{{/* … */}}` (trim markers allowed), `<!-- -->`.
HELM_OPEN_RE = re.compile(r"^\s*\{\{-?\s*/\*")
HELM_CLOSE_RE = re.compile(r"\*/\s*-?\}\}")
HTML_OPEN_RE = re.compile(r"^\s*<!--")
HTML_CLOSE_RE = re.compile(r"-->")
# The closers searched for in a whole text (block_comment_lines): where a line's own pattern allows
# any space, one searched across lines allows any but a line break.
_ONE_LINE_SPACE = r"[^\S\n]"
_HELM_CLOSE_LINE_RE = re.compile(HELM_CLOSE_RE.pattern.replace(r"\s", _ONE_LINE_SPACE))
_HTML_CLOSE_LINE_RE = re.compile(HTML_CLOSE_RE.pattern.replace(r"\s", _ONE_LINE_SPACE))
# What stands before `/*` and `<!--` on a line that opens a block comment.
_HELM_OPENING_RE = re.compile(r"\s*\{\{-?\s*")
_SPACE_RE = re.compile(r"\s*")
# Each block comment's opening token, what stands before it on its line, and its closer.
_OPENINGS = (
    ("/*", _HELM_OPENING_RE, _HELM_CLOSE_LINE_RE),
    ("<!--", _SPACE_RE, _HTML_CLOSE_LINE_RE),
)
# A decorative leading `*` on the lines inside a block comment.
BLOCK_STAR_RE = re.compile(r"^\s*\*(?!/)\s?")

# An ATX heading's opening: up to three spaces, one to six `#`, then a space, a tab or the line's end.
# What follows is read by atx_text, not by a pattern: `(.*?)(?:[ \t]+#+)?[ \t]*$` tried the closing
# sequence at every character of the title, each try reading a run of spaces on (quadratic).
ATX_OPEN_RE = re.compile(r" {0,3}#{1,6}(?![^ \t])")
SETEXT_RE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
FENCE_RE = re.compile(r"^ {0,3}(?:```|~~~)")
# Lines a setext underline cannot turn into a heading: list items, quotes, tables, fences, ATX.
NOT_SETEXT_TEXT_RE = re.compile(r"^\s*(?:[-*+>|]\s|\d+[.)]\s|#|```|~~~|<!--)")

# One token of a comment: a backtick code span (may hold spaces) or a run of non-space characters.
TOKEN_RE = re.compile(r"`[^`]*`|\S+")
DASHES = ("—", "–", "--")  # em dash, en dash, ASCII `--`: the heading ends before them
CLOSING_PUNCTUATION = ".,:;"
# Banner and quoting characters around a heading (`=== TITLE ===`, `{{- /* TITLE */ -}}`, `“TITLE”`),
# trimmed the same way where a heading is defined and where it is quoted. Backticks stay: code spans.
DECORATION = "=*#~_+|/<>(){}[]-§\"'“”‘’ "
MIN_CAPITAL_WORDS = 2  # words with two or more capitals each ...
MIN_CAPITALS = (
    8  # ... and this many capitals in all: `READINESS ONLY` passes, `TODO` and `NOTE` do not
)


# What a line must start with (after its indentation) to open or be a comment, or a fence: the rest
# are skipped without a pattern. Every opener below starts with one of these.
_OPENING = frozenset("#/-{<`~")
# A file's headings, by its text, across reviews: a PR's next push and a replay's next change read
# the same files again (kube-prometheus-stack's values.yaml, 6,000 lines, costs ~25 ms a read).
# Bounded by the characters of the texts kept.
MAX_MEMO_CHARS = 8 * 2**20


@dataclass(frozen=True)
class Heading:
    text: str  # whitespace collapsed, case kept
    line: int  # 1-based


def collapse(text: str) -> str:
    return " ".join(text.split())


def atx_text(line: str) -> str | None:
    """The title of the ATX heading `line` is (`## Title ##` is `Title`), "" for one without a
    title (`##`), None when the line is no ATX heading. The closing `#`s go where a space or tab
    stands before them; a title of `#`s alone stays (`# ###` is `###`)."""
    opened = ATX_OPEN_RE.match(line)
    if opened is None:
        return None
    start, end = opened.end(), _before_run(line, len(line), " \t")
    while start < end and line[start] in " \t":
        start += 1
    hashes = _before_run(line, end, "#")
    if start < hashes < end and line[hashes - 1] in " \t":
        end = _before_run(line, hashes, " \t")
    return line[start:end]


def _before_run(text: str, end: int, chars: str) -> int:
    """Where the run of `chars` that ends at `end` starts (the line is cut once, at the end)."""
    while end > 0 and text[end - 1] in chars:
        end -= 1
    return end


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def caps_heading_span(body: str) -> tuple[int, int] | None:
    """The span of the ALL-CAPS heading that starts `body` (a comment's text), or None."""
    words: list[str] = []
    start: int | None = None
    end = 0
    for match in TOKEN_RE.finditer(body):
        token = match.group()
        if token in DASHES:
            break
        if token.startswith("`"):
            words.append(token)
            start, end = match.start() if start is None else start, match.end()
            continue
        cut = min((token.find(d) for d in DASHES if d in token), default=-1)
        word = token[:cut] if cut >= 0 else token
        if any(c.islower() for c in word):
            break
        if word:
            words.append(word.rstrip(CLOSING_PUNCTUATION))
            trimmed = len(word) - len(words[-1])
            start = match.start() if start is None else start
            end = match.start() + len(word) - trimmed
        if cut >= 0 or (word and word[-1] in CLOSING_PUNCTUATION):
            break
    if start is None or not qualifies(words):
        return None
    return _trim_decoration(body, start, end)


def qualifies(words: list[str]) -> bool:
    plain = [w for w in words if not w.startswith("`")]
    capitals = [sum(c.isupper() for c in w) for w in plain]
    return sum(n >= 2 for n in capitals) >= MIN_CAPITAL_WORDS and sum(capitals) >= MIN_CAPITALS


def _trim_decoration(body: str, start: int, end: int) -> tuple[int, int] | None:
    """Drop banner punctuation around a heading (`=== TITLE ===`)."""
    text = body[start:end]
    lead = len(text) - len(text.lstrip(DECORATION))
    tail = len(text) - len(text.rstrip(DECORATION))
    if lead + tail >= len(text):
        return None
    return start + lead, end - tail


def comment_heading(body: str) -> str | None:
    span = caps_heading_span(body)
    return None if span is None else collapse(body[span[0] : span[1]])


def comment_bodies(text: str, markdown: bool = False) -> list[str | None]:
    """For each line, the text of the comment it holds (whole-line comments and lines of block
    comments), else None. In Markdown, only `<!-- -->` and comments inside fenced code count."""
    bodies: list[str | None] = []
    closer: re.Pattern[str] | None = None
    fenced = False
    for line in git_lines(text):
        if closer is None and line.lstrip()[:1] not in _OPENING:
            bodies.append(None)  # neither in a comment nor opening one (nor a fence): most lines
            continue
        if markdown and closer is None and FENCE_RE.match(line):
            fenced = not fenced
            bodies.append(None)
            continue
        if closer is not None:
            body, closed = _until(line, closer)
            bodies.append(BLOCK_STAR_RE.sub("", body, count=1))
            closer = None if closed else closer
            continue
        for opener, close in ((HELM_OPEN_RE, HELM_CLOSE_RE), (HTML_OPEN_RE, HTML_CLOSE_RE)):
            if match := opener.match(line):
                body, closed = _until(line[match.end() :], close)
                bodies.append(body.strip() or None if closed else body)
                closer = None if closed else close
                break
        else:
            bodies.append(line_comment(line) if (fenced or not markdown) else None)
    return bodies


def line_comment(line: str) -> str | None:
    """The text of the whole-line comment (`#`, `//`, `--`) that `line` is, else None."""
    match = LINE_COMMENT_RE.match(line)
    return line[match.end() :] if match else None


def lines_stand_alone(text: str, markdown: bool) -> bool:
    """Whether each line's comment, and so its heading, is the line's own business: no Markdown
    (fences, setext underlines) and no block comment opening anywhere. Then the lines a diff
    touches are read without the rest of the file: a values.yaml of 6,000 lines costs ~60 ms read
    whole."""
    if markdown:
        return False
    return not _opens_at(text, "/*", _HELM_OPENING_RE) and not _opens_at(text, "<!--", _SPACE_RE)


def block_comment_lines(text: str) -> list[tuple[int, int]]:
    """The lines of each block comment comment_bodies reads in a text that is not Markdown, one
    opened and closed on a line included: (first, last) 0-based line indexes, in order. Found by
    searching for openers and closers, not line by line; lines are git's (bot/textlines.py)."""
    spans: list[tuple[int, int]] = []
    line, at, pos = 0, 0, 0  # `line` is the index of the line that starts at `at`
    while (opened := _next_opening(text, pos)) is not None:
        start, end, closer = opened
        line += text.count("\n", at, start)
        closed = closer.search(text, end)
        if closed is None:  # open to the end of the text
            spans.append((line, line + text.count("\n", start) - text.endswith("\n")))
            break
        last = line + text.count("\n", start, closed.start())
        spans.append((line, last))
        # The rest of the line that closes a block is not read for another.
        after = text.find("\n", closed.end())
        if after < 0:
            break
        line, at, pos = last + 1, after + 1, after + 1
    return spans


def _next_opening(text: str, pos: int) -> tuple[int, int, re.Pattern[str]] | None:
    """The first block comment opened at or after `pos`, where a line opens one: (the start of its
    line, the end of its opener, its closer). Looked for by its `/*` or `<!--` (a scan for the
    opener's pattern at every line start is ~30x slower on a long line), then held to the
    pattern."""
    found: tuple[int, int, re.Pattern[str]] | None = None
    for token, before, closer in _OPENINGS:
        line = _line_opening(text, pos, found[0] if found else len(text), token, before)
        if line is not None:
            found = (line[0], line[1] + len(token), closer)
    return found


def _opens_at(text: str, opener: str, before: re.Pattern[str]) -> bool:
    """Whether some line opens a block comment with `opener`, preceded on it by what `before`
    matches in full (how HELM_OPEN_RE and HTML_OPEN_RE start)."""
    return _line_opening(text, 0, len(text), opener, before) is not None


def _line_opening(
    text: str, pos: int, until: int, opener: str, before: re.Pattern[str]
) -> tuple[int, int] | None:
    """The first line at or after `pos` (a line's start) that opens a block comment with `opener`
    before `until`: (the line's start, where `opener` stands). Only a line's first `opener` can:
    a later one has the first before it, which `before` (spaces and `{{`) never matches; so each
    line is looked at once, however many it holds (a long line of `/*` costs no more)."""
    at = find_token(text, opener, pos, until)
    while at >= 0:
        start = max(text.rfind("\n", pos, at) + 1, pos)
        if before.fullmatch(text, start, at):
            return start, at
        after = text.find("\n", at)
        if after < 0:
            return None
        at = find_token(text, opener, after + 1, until)
    return None


def _until(line: str, closer: re.Pattern[str]) -> tuple[str, bool]:
    match = closer.search(line)
    return (line[: match.start()], True) if match else (line, False)


def find_headings(path: str, text: str) -> tuple[Heading, ...]:
    """Every heading of a file, in line order."""
    return headings_in(is_markdown(path), text)


def headings_in(
    markdown: bool, text: str, bodies: list[str | None] | None = None
) -> tuple[Heading, ...]:
    """Every heading of a text read as Markdown or not, in line order; `bodies`, when given, are
    its comment_bodies(text, markdown), already at hand."""
    key = (markdown, text)
    found = _HEADINGS.get(key)
    if found is None:
        found = (len(text), _find_headings(markdown, text, bodies))
        _HEADINGS.put(key, found)
    return found[1]


_HEADINGS: BoundedCache[tuple[bool, str], tuple[int, tuple[Heading, ...]]] = BoundedCache(
    MAX_MEMO_CHARS, lambda entry: entry[0] + 64 * len(entry[1])
)


def _find_headings(
    markdown: bool, text: str, bodies: list[str | None] | None
) -> tuple[Heading, ...]:
    found: dict[int, str] = {}
    bodies = comment_bodies(text, markdown) if bodies is None else bodies
    for number, body in enumerate(bodies, start=1):
        if body is not None and (heading := comment_heading(body)):
            found[number] = heading
    if markdown:
        found.update(markdown_headings(text))
    return tuple(Heading(found[n], n) for n in sorted(found))


def markdown_headings(text: str) -> dict[int, str]:
    """ATX (`## Title`) and setext (`Title` over `=====`) headings outside fenced code."""
    return {line: collapse(raw) for line, raw in markdown_heading_lines(text).items()}


def markdown_heading_lines(text: str) -> dict[int, str]:
    """The same headings as written, inner spacing kept: GitHub's anchors turn every space into a
    hyphen, so `A  B` and `A B` link differently."""
    found: dict[int, str] = {}
    lines = git_lines(text)
    joined = "\n".join(lines)
    fenced = fenced_lines(lines, joined)
    # Only a line starting with `#`, `=` or `-` can be a heading or an underline: those are found by
    # one search of the text, where a match at every line of a helm-docs README cost ~1 ms.
    for index in _lines_starting(joined, _HEADING_START_RE):
        line = lines[index]
        if index in fenced:
            continue
        if title := atx_text(line):
            found[index + 1] = title.strip()
        elif index > 0 and SETEXT_RE.match(line) and _setext_text(lines[index - 1]):
            found[index] = lines[index - 1].strip()
    return found


def fenced_lines(lines: Sequence[str], joined: str | None = None) -> frozenset[int]:
    """Indexes of the lines of fenced code blocks, fences included: code, not prose. `joined`: the
    lines joined by `\n`, when at hand. Each fence opens or closes a block, an unclosed one runs to
    the end; the fences are found among the lines holding ``` or ~~~ (a search of the text)."""
    joined = "\n".join(lines) if joined is None else joined
    fences = _lines_starting(joined, _FENCE_START_RE)
    fenced: set[int] = set()
    for k in range(0, len(fences), 2):
        last = fences[k + 1] if k + 1 < len(fences) else len(lines) - 1
        fenced.update(range(fences[k], last + 1))
    return frozenset(fenced)


def _lines_starting(joined: str, pattern: re.Pattern[str]) -> list[int]:
    """The indexes, in order, of the lines of `joined` (lines joined by `\n`) that `pattern`
    matches at the start of: it is tried after each `\n` (its first character, which lets the
    search skip ahead at C speed) and at the text's start."""
    found = [0] if pattern.match("\n" + joined[:_START_PEEK]) else []
    line, at = 0, 0
    for match in pattern.finditer(joined):
        line += joined.count("\n", at, match.end())
        at = match.end()
        found.append(line)
    return found


# What a line of a heading or an underline, and a fence (FENCE_RE), start with, after a line break.
_HEADING_START_RE = re.compile(r"\n {0,3}[#=-]")
_FENCE_START_RE = re.compile("\n" + FENCE_RE.pattern.removeprefix("^"))
_START_PEEK = 8  # enough of a first line for either


def _setext_text(line: str) -> bool:
    return bool(line.strip()) and not NOT_SETEXT_TEXT_RE.match(line) and not SETEXT_RE.match(line)
