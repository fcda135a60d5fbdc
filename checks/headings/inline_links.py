"""CommonMark's inline links, `[text](destination "title")`, found in one pass over a line.

Brackets pair as CommonMark pairs them: a `]` closes the innermost open `[` (or `![`, an image),
and it is a link when `(`, a destination, at most a quoted title and `)` follow (`[t](## Title)` is
text). Links do not nest, so a link drops every link bracket still open before it; an image is no
link, but what its brackets hold may be (`[![i](p.png)](x.md#a)`). The destination is read by
cursors that only move forward: a pattern that starts at every `[` and reads to the end of the line
from each was quadratic (a line of `[](`: every bracket read the whole line again).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from bot.textsearch import Forward

_BRACKET_RE = re.compile(r"[\[\]]")
_NOT_SPACE_RE = re.compile(r"\S")
_DESTINATION_END_RE = re.compile(r"[)\s>]")  # a destination runs up to one of these
# A title's closing character, by its opening one.
_TITLE_CLOSE = {'"': re.compile('"'), "'": re.compile("'"), "(": re.compile(r"\)")}


class InlineLink(NamedTuple):
    start: int  # its `[`
    end: int  # after its `)`
    destination: str


class _Destinations:
    """`\\s*<?([^)\\s>]+)>?(?:\\s+(?:"[^"]*"|'[^']*'|\\([^)]*\\)))?\\s*\\)` read after a link's
    `(`, each part by its own cursor: the places each is asked for only grow along a line."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.start = Forward(text, _NOT_SPACE_RE)
        self.stop = Forward(text, _DESTINATION_END_RE)
        self.after_destination = Forward(text, _NOT_SPACE_RE)
        self.title_end = {c: Forward(text, p) for c, p in _TITLE_CLOSE.items()}
        self.after_title = {c: Forward(text, _NOT_SPACE_RE) for c in _TITLE_CLOSE}

    def read(self, at: int) -> tuple[int, str] | None:
        """(the end of the link, its destination) for a `(` just before `at`, or None."""
        text = self.text
        first = self.start.at(at)
        if first >= len(text):
            return None
        begin = first + (text[first] == "<")
        stop = self.stop.at(begin)
        if stop == begin:  # `<` then a stop: `<` alone is the destination, if anything is
            begin, stop = first, self.stop.at(first)
            if stop == begin:
                return None
        after = stop + (stop < len(text) and text[stop] == ">")
        end = self._close(after)
        return (end, text[begin:stop]) if end is not None else None

    def _close(self, at: int) -> int | None:
        """After the destination: an optional title, then `)`."""
        text = self.text
        word = self.after_destination.at(at)
        if word >= len(text):
            return None
        opener = text[word]
        if word > at and opener in _TITLE_CLOSE:
            closed = self.title_end[opener].at(word + 1)
            if closed < len(text):
                last = self.after_title[opener].at(closed + 1)
                if last < len(text) and text[last] == ")":
                    return last + 1
        return word + 1 if opener == ")" else None


def inline_links(text: str) -> list[InlineLink]:
    """Every inline link of `text` (one line), in order; images are not links."""
    if "](" not in text:
        return []
    destinations = _Destinations(text)
    found: list[InlineLink] = []
    openers: list[tuple[int, bool]] = []  # each open bracket: where, and whether an image's
    inactive = 0  # link brackets below this index were opened before a link: literal text now
    pos = 0
    while (bracket := _BRACKET_RE.search(text, pos)) is not None:
        at, pos = bracket.start(), bracket.end()
        if text[at] == "[":
            openers.append((at, at > 0 and text[at - 1] == "!"))
            continue
        if not openers:
            continue
        start, image = openers.pop()
        dropped = not image and len(openers) < inactive
        inactive = min(inactive, len(openers))
        if dropped or not text.startswith("(", at + 1):
            continue
        if image:
            continue  # an image's brackets are its own; what follows them is read on as text
        read = destinations.read(at + 2)
        if read is None:
            continue
        pos = read[0]  # brackets in the destination or title are not brackets
        found.append(InlineLink(start, read[0], read[1]))
        inactive = len(openers)
    return found


def blank_links(text: str, links: list[InlineLink], fill: str = " ") -> str:
    """`text` with each link replaced by `fill`."""
    if not links:
        return text
    out: list[str] = []
    at = 0
    for link in links:
        out += (text[at : link.start], fill)
        at = link.end
    return "".join(out) + text[at:]
