"""Searching large texts at C speed. CPython finds one character at memory speed, but a string of
two or more some hundred times slower in a text that is not ASCII (an 800 KB CRD whose descriptions
quote with `’`: 0.8 ms a search), and a regular expression, even one starting with a literal, walks
such a text a character at a time. So a token that a text seldom holds is found by one of its
characters, and checked where it stands."""

from __future__ import annotations

import re

# Places holding the looked-for character without the token before the search goes back to
# str.find: ~0.2 ms of false hits, about what one search costs the slow way (a Markdown list of
# `*` looked through for `/*`).
FALSE_HITS = 1024


def find_token(text: str, token: str, pos: int = 0, until: int | None = None) -> int:
    """`text.find(token, pos, until)` for a token of two characters or more, found by its second
    character (`*` of `/*`, `!` of `<!--`, `<` of `<<`)."""
    end = len(text) if until is None else until
    mark = token[1]
    at = text.find(mark, pos + 1, end)
    for _ in range(FALSE_HITS):
        if at < 0:
            return -1
        if text.startswith(token, at - 1, end):
            return at - 1
        at = text.find(mark, at + 1, end)
    return text.find(token, at - 1, end) if at >= 0 else -1


def holds_token(text: str, token: str) -> bool:
    """`token in text`, as find_token finds it."""
    return find_token(text, token) >= 0


class Forward:
    """Where `pattern` (one that matches a single character) next matches in `text`, at or after a
    position: `len(text)` where it does not. Asked at positions that only grow, each stretch of the
    text is searched once, however many asks fall in it (a scan that reads on to the next `)` from
    each of a line's brackets reads the line once, not once per bracket)."""

    def __init__(self, text: str, pattern: re.Pattern[str]) -> None:
        self._text, self._pattern = text, pattern
        self._asked, self._found = 1, 0  # nothing asked yet

    def at(self, pos: int) -> int:
        if self._asked <= pos <= self._found:
            return self._found
        match = self._pattern.search(self._text, pos)
        self._asked, self._found = pos, match.start() if match else len(self._text)
        return self._found
