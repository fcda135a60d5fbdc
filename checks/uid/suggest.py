"""The uid check's one-click fix: the pinned `runAsUser:` line removed, where the template pins it
literally (a UID from values is dropped in the values, not here)."""

from __future__ import annotations

from bot.model.context import ChartContext
from bot.model.report import Finding
from bot.textlines import git_lines
from checks.kit.suggest import propose, scalar


def suggest(ctx: ChartContext, f: Finding) -> Finding:
    """`f` (a pinned UID) proposing to delete its `runAsUser:` line, when that line says the UID
    it pins."""
    if f.preexisting or not f.path or not f.line:
        return f
    source = ctx.head.text(f.path)
    lines = git_lines(source) if source is not None else []
    if not 1 <= f.line <= len(lines):
        return f
    if scalar(lines[f.line - 1], "runAsUser") != str(f.data.get("run_as_user")):
        return f
    return propose(f, ctx, f.line, f.line, [])
