"""A finding's proposed one-click fix (a GitHub suggested change), as checks write it in
`data["suggestion"]` and the engine proves it (bot/engine/suggestions.py). A value only: checks
import it without the render machinery."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.model.report import Finding
from bot.textlines import git_lines

KEY, REFUSED = "suggestion", "suggestion_refused"


@dataclass(frozen=True)
class Suggestion:
    """Replace lines `start_line`..`line` (1-based, inclusive) of `path` at head with
    `replacement`: whole lines, each ending in a newline ("" deletes the lines)."""

    path: str
    start_line: int
    line: int
    replacement: str

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "line": self.line,
            "replacement": self.replacement,
        }

    @staticmethod
    def from_data(data: Mapping[str, Any]) -> Suggestion | None:
        """A finding's verified (or proposed) suggestion, or None."""
        raw = data.get(KEY)
        if not isinstance(raw, Mapping):
            return None
        return Suggestion(
            str(raw["path"]), int(raw["start_line"]), int(raw["line"]), str(raw["replacement"])
        )

    def apply(self, text: str) -> str | None:
        """`text` with the edit made, as GitHub makes it; None when the lines are not there."""
        lines = git_lines(text, keepends=True)
        if not 1 <= self.start_line <= self.line <= len(lines):
            return None
        return "".join([*lines[: self.start_line - 1], self.replacement, *lines[self.line :]])


def with_suggestion(finding: Finding, suggestion: Suggestion | None) -> Finding:
    """The finding proposing `suggestion` (unchanged when there is none)."""
    if suggestion is None:
        return finding
    return replace(finding, data={**finding.data, KEY: suggestion.to_json()})


def identity(f: Finding) -> tuple[str, str, str, str, str, str]:
    """What makes a finding the same one after a patch, whatever its wording or line."""
    data = f.data
    return (
        f.check,
        f.rule,
        f.chart or "",
        f.subject or "",
        str(data.get("container") or ""),
        str(data.get("detail") or ""),
    )
