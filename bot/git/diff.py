"""`git diff --raw -z -p --unified=0 -M` → changed files with their added and removed line numbers.

Which files changed, and how, comes from the NUL-separated raw records only: a path is never read
out of patch text, where a PR's own content could forge one. The patch is split on `\\n` alone
(not on U+2028, U+2029 or U+0085, which `str.splitlines` would also break on), and each hunk's
lines are consumed by the counts its header gives, so a content line that looks like `+++ b/x`,
`@@ … @@` or `diff --git` is only ever content. The i-th patch section is the i-th raw record's.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

from bot.git.objects import ChangedFile

log = logging.getLogger(__name__)

# The flags the parser relies on; the caller adds its own (rename detection, no textconv, ...).
DIFF_FORMAT = ("--raw", "-z", "-p", "--unified=0")

_HUNK_RE = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SECTION = b"diff --git "
# Raw statuses → ours: a type change or an unmerged path is a modification of the file.
_STATUS = {"A": "A", "D": "D", "M": "M", "R": "R", "C": "A", "T": "M", "U": "M", "X": "M"}


@dataclass(frozen=True)
class _Record:
    status: str
    path: str
    old_path: str | None  # set for renames and copies


@dataclass(frozen=True)
class _Lines:
    added: frozenset[int]
    removed: frozenset[int]


def parse_diff(output: bytes) -> tuple[ChangedFile, ...]:
    records, patch = _split(output)
    sections = list(_sections(patch))
    if len(sections) != len(records):
        # Never expected; the file list stands on the raw records alone either way.
        log.warning("diff: %d raw records but %d patch sections", len(records), len(sections))
        sections = [_Lines(frozenset(), frozenset())] * len(records)
    return tuple(
        ChangedFile(
            path=r.path,
            status=r.status,
            old_path=r.old_path if r.status == "R" else None,
            added_lines=lines.added,
            removed_lines=lines.removed,
        )
        for r, lines in zip(records, sections, strict=True)
    )


def _split(output: bytes) -> tuple[list[_Record], bytes]:
    """The raw records, and the patch text after them (git ends the records with an empty one)."""
    fields = output.split(b"\0")
    records: list[_Record] = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        letter = fields[i].split(b" ")[-1][:1].decode()
        two_paths = letter in ("R", "C")
        paths = [f.decode(errors="replace") for f in fields[i + 1 : i + 2 + two_paths]]
        if len(paths) != 1 + two_paths:
            break  # a truncated record: nothing after it can be trusted
        status = _STATUS.get(letter, "M")
        old, new = (paths[0], paths[1]) if two_paths else (None, paths[0])
        records.append(_Record(status, new, old))
        i += 2 + two_paths
    patch = b"\0".join(fields[i + 1 :]) if i < len(fields) else b""
    return records, patch


def _sections(patch: bytes) -> Iterator[_Lines]:
    lines = patch.split(b"\n")
    i, started = 0, False
    added: set[int] = set()
    removed: set[int] = set()
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(_SECTION):
            if started:
                yield _Lines(frozenset(added), frozenset(removed))
            started, added, removed = True, set(), set()
            continue
        match = _HUNK_RE.match(line)
        if match is None or not started:
            continue  # a section header line (index, mode, rename, ---, +++, Binary files ...)
        old_start, old_len = int(match[1]), int(match[2] if match[2] is not None else 1)
        new_start, new_len = int(match[3]), int(match[4] if match[4] is not None else 1)
        removed.update(range(old_start, old_start + old_len))
        added.update(range(new_start, new_start + new_len))
        i = _skip_hunk_body(lines, i, old_len, new_len)
    if started:
        yield _Lines(frozenset(added), frozenset(removed))


def _skip_hunk_body(lines: list[bytes], i: int, old: int, new: int) -> int:
    """The index after the hunk's content: `old` removed and `new` added lines (context lines,
    which --unified=0 does not print, count as both), with `\\ No newline` markers between."""
    while (old > 0 or new > 0) and i < len(lines):
        line = lines[i]
        if line.startswith(b"\\"):
            pass
        elif line.startswith(b"-") and old > 0:
            old -= 1
        elif line.startswith(b"+") and new > 0:
            new -= 1
        elif line.startswith(b" ") and old > 0 and new > 0:
            old, new = old - 1, new - 1
        else:
            break  # not what the header announced: stop here rather than swallow a section
        i += 1
    return i
