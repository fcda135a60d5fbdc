"""The hunks of a change to one file, as its removed and added lines, for telling two PRs that make
the same edit: the exact version of "the same change", by text, not by what it renders.

Two PRs branched from different commits number their lines differently, so a hunk is its lines,
never its position. A hunk that says nothing of its own is left out: blank lines, a lone `{{ end }}`
or `---`, and a `Chart.yaml` that only moves `version`/`appVersion` (two PRs taking the same
version is the version check's race, not a duplicate change), nor a hunk that only echoes that
move: `helm.sh/chart: app-0.170.0` → `app-0.171.0` in a chart's committed rendered examples, which
every PR bumping the chart regenerates alike; nor one whose every line sets a label or annotation
the rendered diff calls noise (config `diff:`: `helm.sh/chart`, `checksum/*`, ...), a value derived
from the rest that two different changes can share."""

from __future__ import annotations

import difflib
import fnmatch
import re
from dataclasses import dataclass

from bot.model.chart_files import BUMP_LINE_RE as VERSION_LINE
from bot.textlines import git_lines

CHART_FILE = "Chart.yaml"
# Lines that any two edits of a template share without being the same edit.
_FILLER = re.compile(r"^\s*(\{\{-?\s*end\s*-?\}\}|---|[\]}),]*)?\s*$")
# `key: value` as YAML writes a label or annotation, the key quoted or not.
_KEY = re.compile(r"""^\s*["']?([^"':\s]+)["']?\s*:""")
# Larger files are not compared line by line (difflib is quadratic in the worst case).
MAX_LINES = 5000


@dataclass(frozen=True)
class Hunk:
    path: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    # The unchanged lines just before and after it: where in the file the edit is. The same line
    # rewritten in two places of a file (a routine rename in two tests) is no shared change; found
    # on a public repository (issue 38).
    around: tuple[str, str] = ("", "")

    def describe(self) -> str:
        """`-a +b` in one line, for a finding: its first changed line of each kind."""
        parts = [f"-{self.removed[0].strip()}"] if self.removed else []
        parts += [f"+{self.added[0].strip()}"] if self.added else []
        more = len(self.removed) + len(self.added) - len(parts)
        return " ".join(parts) + (f" (and {more} more lines)" if more else "")


def hunks(
    path: str,
    before: str | None,
    after: str | None,
    moves: tuple[tuple[str, str], ...] = (),
    noise: tuple[str, ...] = (),
) -> frozenset[Hunk]:
    """The meaningful hunks from `before` to `after` (None: the file is absent on that side).
    `moves`: the chart's (old, new) version and appVersion, whose mere echo says nothing;
    `noise`: globs of keys whose lines say nothing either."""
    old, new = git_lines(before or ""), git_lines(after or "")
    if old == new or len(old) > MAX_LINES or len(new) > MAX_LINES:
        return frozenset()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = (
        Hunk(path, tuple(old[i1:i2]), tuple(new[j1:j2]), _around(old, i1, i2))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )
    return frozenset(
        h for h in found if _meaningful(h) and not _echoes(h, moves) and not _noise(h, noise)
    )


def _around(lines: list[str], start: int, end: int) -> tuple[str, str]:
    return (lines[start - 1] if start > 0 else "", lines[end] if end < len(lines) else "")


def _noise(hunk: Hunk, keys: tuple[str, ...]) -> bool:
    lines = (*hunk.removed, *hunk.added)
    return bool(keys) and all(
        (match := _KEY.match(line)) is not None
        and any(fnmatch.fnmatchcase(match.group(1), key) for key in keys)
        for line in lines
    )


def _echoes(hunk: Hunk, moves: tuple[tuple[str, str], ...]) -> bool:
    """The added lines are the removed ones with only the chart's version moves applied."""
    moved = [(old, new) for old, new in moves if old and new and old != new]
    if not moved or len(hunk.removed) != len(hunk.added):
        return False
    lines = list(hunk.removed)
    for old, new in moved:
        lines = [line.replace(old, new) for line in lines]
    return tuple(lines) == hunk.added


def _meaningful(hunk: Hunk) -> bool:
    lines = (*hunk.removed, *hunk.added)
    if all(_FILLER.match(line) for line in lines):
        return False
    only_versions = all(VERSION_LINE.match(line) for line in lines)
    return not (hunk.path.rsplit("/", 1)[-1] == CHART_FILE and only_versions)
