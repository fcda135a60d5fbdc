"""The anchors of a Markdown file, as GitHub computes them: one per heading (its text slugged,
`-1`, `-2` for repeats in document order) and one per explicit HTML `id` or `<a name>`. Pure text
in, values out."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bot.lru import BoundedCache
from checks.headings.text import MAX_MEMO_CHARS, fenced_lines, markdown_heading_lines

# Inline markup a heading's anchor is computed without: GitHub slugs the rendered text.
IMAGE_OR_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]")
CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")
HTML_TAG_RE = re.compile(r"</?[A-Za-z][^>]*>")
EMPHASIS_RE = re.compile(r"\*+|(?<![^\W_])_+|_+(?![^\W_])")
# Explicit anchors: `<a name="x">`, and any element's `id="x"` (GitHub keeps both, prefixed
# `user-content-`, and follows `#x` to them).
HTML_ANCHOR_RE = re.compile(
    r"<a\s[^>]*?\bname\s*=\s*[\"']([^\"']+)[\"']|<[A-Za-z][^>]*?\sid\s*=\s*[\"']([^\"']+)[\"']",
    re.IGNORECASE,
)
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

    def keep_code(m: re.Match[str]) -> str:
        codes.append(m.group(2).strip())
        return f"\0{len(codes) - 1}\0"

    text = CODE_SPAN_RE.sub(keep_code, heading)
    text = IMAGE_OR_LINK_RE.sub(lambda m: m.group(1) or m.group(2) or "", text)
    text = EMPHASIS_RE.sub("", HTML_TAG_RE.sub("", text))
    return re.sub(r"\0(\d+)\0", lambda m: codes[int(m.group(1))], text).strip()


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
    lines = text.splitlines()
    fenced = fenced_lines(lines)
    for index, line_text in enumerate(lines):
        if index in fenced or "<" not in line_text:
            continue
        for m in HTML_ANCHOR_RE.finditer(line_text):
            found.append(Anchor(m.group(1) or m.group(2), index + 1, None))
    return tuple(sorted(found, key=lambda a: a.line))


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
