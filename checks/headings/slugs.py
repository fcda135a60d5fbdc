"""The anchors of a Markdown file, as GitHub computes them: one per heading (its text slugged,
`-1`, `-2` for repeats in document order) and one per explicit HTML `id` or `<a name>`. Pure text
in, values out."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bot.codespans import code_spans
from bot.lru import BoundedCache
from bot.textlines import git_lines
from bot.textsearch import Forward
from checks.headings.text import MAX_MEMO_CHARS, fenced_lines, markdown_heading_lines

# Inline markup a heading's anchor is computed without: GitHub slugs the rendered text. Each is
# read in one pass over the heading (code spans by bot/codespans.py): a pattern such as
# `!?\[([^\]]*)\]…` or `<[A-Za-z][^>]*>` read on to the line's end from every `[` or `<` of a crafted
# line, which was quadratic.
EMPHASIS_RE = re.compile(r"\*+|(?<![^\W_])_+|_+(?![^\W_])")
_OPEN_BRACKET_RE = re.compile(r"\[")
_CLOSE_BRACKET_RE = re.compile(r"\]")
_CLOSE_PAREN_RE = re.compile(r"\)")
_TAG_END_RE = re.compile(">")
_TAG_START_RE = re.compile(r"</?[A-Za-z]")
# Explicit anchors, read from each HTML tag (`<` and a letter, to its `>` or the line's end; tags
# do not nest): `<a name="x">`, and any element's `id="x"` (GitHub keeps both, prefixed
# `user-content-`, and follows `#x` to them).
_A_TAG_RE = re.compile(r"<a\s", re.IGNORECASE)
# An attribute up to its value's opening quote (which cannot stand past the tag's `>`); the value
# runs to the next quote of either kind, found by a cursor.
NAME_ATTRIBUTE_RE = re.compile(r"\bname\s*=\s*[\"']", re.IGNORECASE)
ID_ATTRIBUTE_RE = re.compile(r"\sid\s*=\s*[\"']", re.IGNORECASE)
_QUOTE_RE = re.compile("[\"']")
_PLACEHOLDER_RE = re.compile(r"\0(\d+)\0")
# Unicode categories a slug keeps (github-slugger): letters, marks, numbers, connectors (`_`).
KEPT_CATEGORIES = ("L", "M", "N", "Pc")


@dataclass(frozen=True)
class Anchor:
    name: str  # as a link writes it after `#`
    line: int  # 1-based
    heading: str | None  # the heading it comes from; None for an HTML anchor


def inline_text(heading: str) -> str:
    """The text a heading renders: links and images by their text, code spans by their content,
    HTML tags and emphasis markers dropped."""
    codes: list[str] = []
    out: list[str] = []
    at = 0
    for span in code_spans(heading):
        codes.append(heading[span.start + span.fence : span.end - span.fence].strip())
        out += (heading[at : span.start], f"\0{len(codes) - 1}\0")
        at = span.end
    text = "".join(out) + heading[at:]
    text = EMPHASIS_RE.sub("", _without_tags(_link_texts(text)))
    return _PLACEHOLDER_RE.sub(lambda m: codes[int(m.group(1))], text).strip()


def _link_texts(text: str) -> str:
    """`text` with each link or image, inline (`[t](…)`) or by reference (`[t][ref]`), replaced by
    its text: brackets pair as far as the next `]`, then `(` up to the next `)` or `[` up to the
    next `]`. Each search reads on from where the one before it stopped."""
    if "[" not in text:
        return text
    brackets, parens, refs = (
        Forward(text, p) for p in (_CLOSE_BRACKET_RE, _CLOSE_PAREN_RE, _CLOSE_BRACKET_RE)
    )
    opens = Forward(text, _OPEN_BRACKET_RE)
    out: list[str] = []
    at = pos = 0
    while (opened := opens.at(pos)) < len(text):
        closed = brackets.at(opened + 1)
        if closed >= len(text):
            break  # no `]` after this `[`, nor after any later one
        end = None
        if text.startswith("(", closed + 1):
            end = parens.at(closed + 2)
        elif text.startswith("[", closed + 1):
            end = refs.at(closed + 2)
        if end is None or end >= len(text):
            pos = closed + 1  # every `[` before `closed` pairs with it, and fails as this one did
            continue
        start = opened - 1 if opened > pos and text[opened - 1] == "!" else opened
        out += (text[at:start], text[opened + 1 : closed])
        at = pos = end + 1
    return "".join(out) + text[at:] if out else text


def _without_tags(text: str) -> str:
    """`text` without its HTML tags (`<b>`, `</a>`: `<` or `</`, a letter, to the next `>`)."""
    if "<" not in text:
        return text
    ends = Forward(text, _TAG_END_RE)
    out: list[str] = []
    at = 0
    for tag in _TAG_START_RE.finditer(text):
        if tag.start() < at:
            continue  # inside the tag before it
        end = ends.at(tag.end())
        if end >= len(text):
            break  # no `>` after this tag's start, nor after any later one
        out.append(text[at : tag.start()])
        at = end + 1
    return "".join(out) + text[at:] if out else text


def slug(text: str) -> str:
    """GitHub's slug of a heading's text: lower-cased, every character that is not a letter, digit,
    space, hyphen or underscore dropped, each space a hyphen (runs are not collapsed)."""
    kept = (
        c
        for c in text.strip().lower()
        if c in " -" or unicodedata.category(c).startswith(KEPT_CATEGORIES)
    )
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> tuple[Anchor, ...]:
    """Every anchor of a Markdown file, in line order. Remembered by the text, across reviews: a
    review reads the anchors of each README it changes at both sides, and the next review (a
    replay's next change, a PR's next push) the same README again (helm-docs' of 800 lines: ~2 ms a
    read)."""
    kept = _ANCHORS.get(text)
    if kept is None:
        kept = (len(text), _anchors(text))
        _ANCHORS.put(text, kept)
    return kept[1]


_ANCHORS: BoundedCache[str, tuple[int, tuple[Anchor, ...]]] = BoundedCache(
    MAX_MEMO_CHARS, lambda kept: kept[0] + 64 * len(kept[1])
)


def _anchors(text: str) -> tuple[Anchor, ...]:
    found: list[Anchor] = []
    taken: dict[str, int] = {}
    for line, raw in sorted(markdown_heading_lines(text).items()):
        found.append(Anchor(_unique(slug(inline_text(raw)), taken), line, raw))
    lines = git_lines(text)
    fenced = fenced_lines(lines)
    for index, line_text in enumerate(lines):
        if index in fenced or "<" not in line_text:
            continue
        found += (Anchor(name, index + 1, None) for name in html_anchor_names(line_text))
    return tuple(sorted(found, key=lambda a: a.line))


def html_anchor_names(line: str) -> list[str]:
    """The explicit anchors of a line's HTML tags, one a tag at most: an `<a>`'s `name`, else any
    element's `id`. A tag is `<` and a letter up to its `>` (or the line's end); tags do not nest,
    so each part of the line is read for one tag only."""
    names: list[str] = []
    ends = Forward(line, _TAG_END_RE)
    values = (Forward(line, _QUOTE_RE), Forward(line, _QUOTE_RE))
    pos = 0
    while (start := line.find("<", pos)) >= 0:
        letter = line[start + 1 : start + 2]
        if not (letter.isascii() and letter.isalpha()):
            pos = start + 1
            continue
        end = ends.at(start + 1)
        found = None
        if _A_TAG_RE.match(line, start):
            found = _attribute(line, NAME_ATTRIBUTE_RE, start + 3, end, values[0])
        found = found or _attribute(line, ID_ATTRIBUTE_RE, start + 2, end, values[1])
        if found is not None:
            names.append(line[found[0] : found[1]])
        pos = max(end + 1, found[1] + 1 if found else 0)
    return names


def _attribute(
    line: str, pattern: re.Pattern[str], start: int, end: int, values: Forward
) -> tuple[int, int] | None:
    """The span of the first non-empty quoted value of the attribute `pattern` opens in the tag
    `line[start:end]`."""
    for opened in pattern.finditer(line, start, end):
        closed = values.at(opened.end())
        if opened.end() < closed < len(line):
            return opened.end(), closed
    return None


def _unique(base: str, taken: dict[str, int]) -> str:
    """github-slugger's rule: a repeat gets `-N`, counting per base slug and skipping a name an
    earlier heading already has (`a`, `a-1`, `a` gives `a`, `a-1`, `a-2`)."""
    name = base
    while name in taken:
        taken[base] += 1
        name = f"{base}-{taken[base]}"
    taken[name] = 0
    return name


def find_anchor(found: tuple[Anchor, ...], name: str) -> Anchor | None:
    """The anchor a link's fragment reaches. Compared without case: GitHub's page script also finds
    `#Install` for the heading `Install`, and a false failure costs more than a missed one."""
    wanted = name.lower()
    return next((a for a in found if a.name.lower() == wanted), None)
