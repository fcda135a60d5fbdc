"""The hunks of a change to one file, as its removed and added lines, for telling two PRs that make
the same edit: the exact version of "the same change", by text, not by what it renders.

Two PRs branched from different commits number their lines differently, so a hunk is its lines,
never its position. A hunk that says nothing of its own is left out: blank lines, a lone `{{ end }}`
or `---`, and a `Chart.yaml` that only moves `version`/`appVersion` (two PRs taking the same
version is the version check's race, not a duplicate change)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

CHART_FILE = "Chart.yaml"
# Lines that any two edits of a template share without being the same edit.
_FILLER = re.compile(r"^\s*(\{\{-?\s*end\s*-?\}\}|---|[\]}),]*)?\s*$")
_VERSION_LINE = re.compile(r"^\s*(version|appVersion)\s*:")
# Larger files are not compared line by line (difflib is quadratic in the worst case).
MAX_LINES = 5000


@dataclass(frozen=True)
class Hunk:
    path: str
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def describe(self) -> str:
        """`-a +b` in one line, for a finding: its first changed line of each kind."""
        parts = [f"-{self.removed[0].strip()}"] if self.removed else []
        parts += [f"+{self.added[0].strip()}"] if self.added else []
        more = len(self.removed) + len(self.added) - len(parts)
        return " ".join(parts) + (f" (and {more} more lines)" if more else "")


def hunks(path: str, before: str | None, after: str | None) -> frozenset[Hunk]:
    """The meaningful hunks from `before` to `after` (None: the file is absent on that side)."""
    old, new = (before or "").splitlines(), (after or "").splitlines()
    if old == new or len(old) > MAX_LINES or len(new) > MAX_LINES:
        return frozenset()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found = (
        Hunk(path, tuple(old[i1:i2]), tuple(new[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )
    return frozenset(h for h in found if _meaningful(h))


def _meaningful(hunk: Hunk) -> bool:
    lines = (*hunk.removed, *hunk.added)
    if all(_FILLER.match(line) for line in lines):
        return False
    only_versions = all(_VERSION_LINE.match(line) for line in lines)
    return not (hunk.path.rsplit("/", 1)[-1] == CHART_FILE and only_versions)
