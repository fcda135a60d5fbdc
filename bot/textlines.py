"""A file's text as numbered lines, the way git and GitHub number them: the one place text is cut
into lines wherever a line number comes out (a finding's line, a suggested change, a template's
line, a duplicate's hunk).

git breaks lines at `\\n` alone; a `\\r\\n` line ends in `\\r` as `git diff` shows it. `str.splitlines`
also breaks at `\\r`, `\\v`, `\\f`, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and U+2029: three form feeds in a
template put every line after them three lines off, and a suggestion verified on one line is posted
on another. So file text is never cut with `str.splitlines` (tests/test_textlines.py holds every
use of it to a short list of texts that are never a file's).

YAML (PyYAML and libyaml alike) also counts `\\r`, `\\x85`, U+2028 and U+2029 as line breaks:
`git_line` turns a line a YAML mark names into git's.
"""

from __future__ import annotations

import re

# The longest line a check reads, in characters: past it a line is data (minified JSON, a base64
# blob), not text a person writes or quotes; a longer line is read to this many characters, and
# what is cut says so (the headings check's --explain).
MAX_LINE_CHARS = 65_536

# What YAML 1.1 breaks a line at besides `\n` (a `\r\n` is one break, counted at its `\n`).
_YAML_BREAKS = ("\r", "\x85", "\u2028", "\u2029")


def git_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of `text` as git numbers them (line N is `git_lines(text)[N - 1]`): cut at `\\n`
    alone, a final `\\n` ending the last line rather than opening an empty one (as splitlines).
    With `keepends`, each line keeps its `\\n` (the last one has none when the text does not end
    in a line break), so that joining them gives the text back."""
    if not text:
        return []
    if keepends:
        lines = [line + "\n" for line in text.split("\n")]
        last = lines.pop()
        if last != "\n":
            lines.append(last[:-1])
        return lines
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def capped_lines(text: str, cap: int = MAX_LINE_CHARS) -> tuple[str, tuple[int, ...]]:
    """`text` with each line longer than `cap` characters cut to its first `cap` (every line keeps
    its number), and the numbers of the lines cut."""
    if not _has_long_line(text, cap):
        return text, ()
    lines = text.split("\n")
    cut = tuple(number for number, line in enumerate(lines, start=1) if len(line) > cap)
    return "\n".join(line[:cap] for line in lines), cut


def _has_long_line(text: str, cap: int) -> bool:
    """Whether a line of `text` is longer than `cap`: each window of `cap` characters after a
    line's start is searched for its last line break (a handful of searches for a text of short
    lines, where cutting it into lines makes a string of each)."""
    at = 0
    while at + cap < len(text):
        last = text.rfind("\n", at, at + cap + 1)
        if last < 0:
            return True
        at = last + 1
    return False


def line_count(text: str) -> int:
    """`len(git_lines(text))`, without making the lines."""
    return text.count("\n") + (not text.endswith("\n")) if text else 0


def line_at(text: str, offset: int) -> int:
    """The 1-based git line holding the character at `offset`."""
    return text.count("\n", 0, offset) + 1


def git_line(text: str, yaml_line: int) -> int:
    """The 1-based git line of the 0-based line `yaml_line` that a YAML mark (PyYAML's, libyaml's)
    names in `text` (the stream's end, after a final line break, is the line after the last, as
    the parsers say)."""
    if not any(c in text for c in _YAML_BREAKS):
        return yaml_line + 1
    at = 0
    for number, found in enumerate(_YAML_BREAK_RE.finditer(text), start=1):
        if number > yaml_line:
            break
        at = found.end()
    return line_at(text, at)


_YAML_BREAK_RE = re.compile("\r\n|[\n\r\x85\u2028\u2029]")
