"""A finding's proposed one-click fix (a GitHub suggested change, `Finding.suggestion`), as
checks propose it and the engine proves it (bot/engine/suggestions.py). Values only: checks import
it without the render machinery."""

from __future__ import annotations

from dataclasses import replace

from bot.model.report import Finding, Suggestion

__all__ = ["Suggestion", "identity", "with_suggestion"]


def with_suggestion(finding: Finding, suggestion: Suggestion | None) -> Finding:
    """The finding proposing `suggestion` (unchanged when there is none)."""
    if suggestion is None:
        return finding
    return replace(finding, suggestion=suggestion)


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
