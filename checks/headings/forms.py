"""How strongly a mention says it refers to a heading. EXPLICIT: a reference construction, such as
"the heading X in FILE", "see X in FILE", "X (FILE)", "FILE § X", "X (above)", or a heading named
with another repository's file (`owner/name:path`, a blob URL). Anything else is LOOSE: capitals or
a quote that merely stand near a file name, which real PRs are full of (SQL, pasted errors, log
lines, a commit message's own headings, paraphrase). Only an explicit reference may fail a PR.
Pure text in, a verdict out."""

from __future__ import annotations

import re
from dataclasses import dataclass

# How far before a mention its construction may start: "see the heading " and a little more.
LOOKBEHIND = 48
NOUN = r"(?:heading|section|comment|note|banner|block|paragraph)"
# "the heading X …", "section X …", "… § X": the words before say a heading follows.
NAMED_BEFORE_RE = re.compile(r"(?:\b(?:heading|section)[ :]*|§ ?)$")
NAMED_AFTER_RE = re.compile(r"^ ?(?:heading|section)\b")
# "see X in FILE", "per the X note of FILE": a verb of reference, then the heading, then the file.
VERB_BEFORE_RE = re.compile(
    r"(?:^|[^\w])(?:see(?: also)?|cf\.?|per|follows?|following|according to|as in)"
    rf"(?: the)?(?: {NOUN})? ?$"
)
IN_FILE_RE = re.compile(rf"^ ?(?P<noun>{NOUN} )?(?:in|of|from) (?:the )?(?:file )?$")
PAREN_OPEN_RE = re.compile(r"^ ?\((?:see |in |cf\.? )?$")
PAREN_CLOSE_RE = re.compile(r"\s*\)")  # matched where the file ends, the text not cut there
WHITESPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class Pairing:
    """A mention (its span in the unit's text) and the file it was paired with."""

    start: int
    end: int
    file_start: int
    file_end: int
    same_sentence: bool
    qualified: bool  # the file names its repository


def is_explicit(text: str, pairing: Pairing) -> bool:
    if not pairing.same_sentence:
        return False
    if pairing.qualified:
        return True
    before = _flat(text[max(0, pairing.start - LOOKBEHIND) : pairing.start])
    if NAMED_BEFORE_RE.search(before) or NAMED_AFTER_RE.match(_flat_after(text, pairing.end)):
        return True
    if pairing.file_start < pairing.end:
        return False  # the file comes first: only "FILE § X" reads that way, matched above
    between = _flat_short(text, pairing.end, pairing.file_start)
    if between is None:
        return False  # longer than " paragraph from the file ", the longest construction
    if PAREN_OPEN_RE.match(between):
        return bool(PAREN_CLOSE_RE.match(text, pairing.file_end))
    in_file = IN_FILE_RE.match(between)
    return bool(in_file and (in_file.group("noun") or VERB_BEFORE_RE.search(before)))


def _flat(text: str) -> str:
    """Lower case, one space for any run of whitespace (a comment block's line breaks)."""
    return WHITESPACE_RE.sub(" ", text).lower()


# The constructions read from the flat text after a mention: all short, so a unit is never
# flattened to its end once per mention (a crafted line of a megabyte quotes thousands).
_LONGEST_BETWEEN = len(" paragraph from the file ")
_AFTER_WINDOW = 16  # " heading" and the character its word boundary looks at, and more
_NEXT_WORD_RE = re.compile(r"\S")
_PIECE_RE = re.compile(r"\s+|\S{1,64}")


def _flat_after(text: str, start: int) -> str:
    """The start of `_flat(text[start:])`: its first space, if any, and what follows it."""
    word = _NEXT_WORD_RE.search(text, start)
    if word is None:
        return " " if start < len(text) else ""
    lead = " " if word.start() > start else ""
    return lead + _flat(text[word.start() : word.start() + _AFTER_WINDOW])


def _flat_short(text: str, start: int, end: int) -> str | None:
    """`_flat(text[start:end])` where it is at most _LONGEST_BETWEEN characters, else None: read
    a piece at a time and given up on as soon as it is longer."""
    out: list[str] = []
    size = 0
    for piece in _PIECE_RE.finditer(text, start, end):
        flat = " " if piece.group()[0].isspace() else piece.group().lower()
        size += len(flat)
        if size > _LONGEST_BETWEEN:
            return None
        out.append(flat)
    return "".join(out)
