"""A file's text and what is read of it whole, each read once per review. A review reads a changed
file for its references, its links and the headings it removes; every whole pass over a CRD of
800 KB (its lines, a scan for block comments) costs a millisecond or two, and an operator's release
changes a dozen such files on each side."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from functools import cached_property
from typing import overload

from bot.textlines import git_lines
from checks.headings.text import is_markdown, lines_stand_alone

# A text longer than this is cut into lines a stretch at a time, the stretches asked for: a CRD's
# 800 KB is 14,000 lines (~1.4 ms to cut whole), of which a diff touches a few dozen.
CHUNKED_CHARS = 256 * 1024
STRETCH_CHARS = 32 * 1024


class FileText:
    """The text of the file at `path`. Values computed on the first ask; the text never changes."""

    def __init__(self, path: str, text: str, cut: tuple[int, ...] = ()) -> None:
        self.path = path
        self.text = text
        self.cut = cut  # the lines read only to their first MAX_LINE_CHARS characters

    @cached_property
    def markdown(self) -> bool:
        return is_markdown(self.path)

    @cached_property
    def lines(self) -> Sequence[str]:
        """As git numbers them (bot/textlines.py)."""
        if len(self.text) > CHUNKED_CHARS:
            return StretchedLines(self.text)
        return tuple(git_lines(self.text))

    @cached_property
    def stands_alone(self) -> bool:
        """Each line's comment is the line's own business (text.lines_stand_alone)."""
        return lines_stand_alone(self.text, self.markdown)


class StretchedLines(Sequence[str]):
    """The lines of a text as git numbers them (bot/textlines.py), split a stretch of about
    STRETCH_CHARS at a time on the first ask for a line in it. Counting line breaks and finding one
    are single-character searches, at memory speed; making 14,000 strings is not."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [0]  # where each stretch starts: a line's start
        self._firsts = [0]  # the index of its first line
        at = 0
        while (cut := text.find("\n", at + STRETCH_CHARS) + 1) and cut < len(text):
            self._firsts.append(self._firsts[-1] + text.count("\n", at, cut))
            self._starts.append(cut)
            at = cut
        last = text.count("\n", at) + (not text.endswith("\n"))
        self._len = self._firsts[-1] + last if text else 0
        self._stretches: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._len))]
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError(index)
        k = bisect.bisect_right(self._firsts, index) - 1
        stretch = self._stretches.get(k)
        if stretch is None:
            end = self._starts[k + 1] if k + 1 < len(self._starts) else len(self._text)
            stretch = self._stretches[k] = git_lines(self._text[self._starts[k] : end])
        return stretch[index - self._firsts[k]]
