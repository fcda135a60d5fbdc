"""What the check says about the headings a PR removes or rewords: still quoted in a reference form
(a failure), only mentioned near the file or still there as text (a notice), explained by the PR's
own text, or half of a pair."""

from __future__ import annotations

from typing import Any

from bot.model.context import Context
from bot.model.report import Finding
from checks.headings.files import TreeFiles
from checks.headings.messages import MESSAGES, finding
from checks.headings.removals import (
    Referrer,
    Removal,
    paired_halves,
    quoting_files,
    quoting_pr_text,
)


def removal_findings(
    ctx: Context, head: TreeFiles, removals: list[Removal], resolved: list[str]
) -> list[Finding]:
    quoted = quoting_files(ctx, head, removals)
    halves = paired_halves(ctx, head, removals)
    findings = []
    for removal in removals:
        if quoted[removal]:
            findings.append(_quoted_finding(head, removal, quoted[removal]))
        elif explained := quoting_pr_text(ctx.pr, removal):
            findings.append(_removal_finding("reworded-explained", removal, explained=explained))
        else:
            resolved.append(
                f"removed heading “{removal.text}” ({_where(removal)}): nothing quotes it"
            )
        if removal in halves:
            other, line = halves[removal]
            findings.append(_removal_finding("paired-half", removal, other=other, line=line))
    return findings


def _quoted_finding(head: TreeFiles, removal: Removal, referrers: list[Referrer]) -> Finding:
    """A failure only when a referrer is explicit and the words are gone from the file: one that
    still holds them as text still shows a reader what was quoted."""
    explicit = [r.where for r in referrers if r.explicit]
    kept = head.text_lines(removal.head_path, removal.text) if removal.head_path else ()
    if explicit and not kept:
        return _removal_finding("removed-still-quoted", removal, referrers=explicit)
    how = (
        f", and {removal.head_path} still holds the words as text (line {kept[0]})"
        if kept
        else " near that file, though not in a reference form"
    )
    wheres = explicit or [r.where for r in referrers]
    mention = "mention" if len(wheres) > 1 else "mentions"
    return _removal_finding(
        "removed-loosely-quoted", removal, referrers=wheres, mention=mention, how=how
    )


def _where(removal: Removal) -> str:
    return f"{removal.base_path} line {removal.base_line} at base"


def _removal_finding(rule: str, removal: Removal, **extra: Any) -> Finding:
    """On the hunk that removed the heading: its nearest head line, so it can be an inline comment
    (the base line is in data); a deleted file gets no line."""
    where = _where(removal)
    shown = {k: " and ".join(v) if isinstance(v, list) else v for k, v in extra.items()}
    to = f" to “{removal.new_wording}”" if removal.new_wording else ""
    what = f"This PR {'rewords' if to else 'removes'} the heading “{removal.text}” ({where}){to}"
    message = MESSAGES[rule].format(what=what, **shown)
    data = {
        "base_path": removal.base_path,
        "base_line": removal.base_line,
        "new_wording": removal.new_wording,
        **{k: v for k, v in extra.items() if k not in ("mention", "how")},
    }
    path = removal.head_path or removal.base_path
    return finding(rule, removal.text, path, removal.head_line, message, where, data)
