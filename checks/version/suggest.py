"""The `version` check's one-click fix: `Chart.yaml`'s `version:` line set to the next free version,
and `appVersion:` with it where the repository keeps the two equal."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.model.context import ChartContext
from bot.model.report import Finding
from bot.textlines import git_lines
from bot.versions.claims import Status
from checks.kit.suggest import propose, with_value
from checks.version.findings import app_habit

if TYPE_CHECKING:
    from checks.version.assessment import Assessment

# The verdicts whose fix is the suggested version. Not a race: either PR may keep the version, and
# which one moves is the release manager's call.
FIXED_BY_SUGGESTED = frozenset({Status.TAKEN, Status.NOT_GREATER, Status.INVALID})
APP_VERSION = "app-version"
_APP_VERSION_LINE = re.compile(r"""^["']?appVersion["']?[ \t]*:""")


def suggest(ctx: ChartContext, a: Assessment, f: Finding) -> Finding:
    """`f` with its fix proposed, where it is an edit of the lines the PR wrote."""
    head, base = a.claim.head, a.claim.base
    text = ctx.head.text(head.file) if head is not None else None
    if head is None or text is None or head.version_line is None:
        return f
    lines = git_lines(text)
    app_line = next((n for n, t in enumerate(lines, 1) if _APP_VERSION_LINE.match(t)), None)
    equal = base is not None and base.version is not None and base.app_version == base.version
    # appVersion follows the version only where the chart keeps them together, not by chance.
    equal = equal and app_habit(ctx).keeps_equal is not False
    if f.rule == APP_VERSION and app_line is not None and head.version is not None:
        return _edit(ctx, f, lines, {app_line: ("appVersion", head.version)})
    suggested = a.verdict.suggested
    if f.rule not in FIXED_BY_SUGGESTED or suggested is None:
        return f
    edits = {head.version_line: ("version", suggested)}
    if equal and app_line is not None:
        both = _edit(ctx, f, lines, {**edits, app_line: ("appVersion", suggested)})
        if both is not f:
            return both
    return _edit(ctx, f, lines, edits)  # appVersion not the PR's line: the version alone


def _edit(
    ctx: ChartContext, f: Finding, lines: list[str], edits: dict[int, tuple[str, str]]
) -> Finding:
    start, end = min(edits), max(edits)
    new = list(lines[start - 1 : end])
    for number, (key, value) in edits.items():
        changed = with_value(lines[number - 1], key, value)
        if changed is None:
            return f
        new[number - start] = changed
    return propose(f, ctx, start, end, new)
