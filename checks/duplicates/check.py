"""The `duplicates` check: another open PR that closes the same issue, or makes the same edit to the
same chart file, as this one. Two PRs that fix the same thing cost a reviewer a day; saying so
before either is reviewed costs nothing.

"The same change" is the exact version: the same hunk (the same removed and the same added lines
of the same file) in both PRs' diffs against their merge bases with the target, not a comparison
of what the two heads render. A PR stacked on the other carries its hunks without duplicating
them, so it is left alone."""

from __future__ import annotations

from dataclasses import dataclass

from bot.engine.check import Check
from bot.engine.context import Context, OpenPR, PullRequestInfo
from bot.engine.report import Finding, Severity
from checks.duplicates.hunks import Hunk, hunks
from checks.duplicates.keywords import IssueRef, closing_issues
from checks.duplicates.others import chart_paths, stacked, touched

NAME = "duplicates"
SAME_ISSUE, SAME_CHANGE = "same-issue", "same-change"
SEVERITY = Severity.WARNING
# How many shared hunks a message spells out; the data lists them all.
HUNKS_SHOWN = 3

TITLE_ISSUE = "{who} also closes {issues}"
TITLE_CHANGE = "{who} makes the same change to {files}"
SAYS_ISSUE = "closes {issues} too"
SAYS_CHANGE = "makes the same edit to the same lines: {hunks}"
MSG_END = " One of the two is likely redundant: compare them before reviewing both."


@dataclass(frozen=True)
class Overlap:
    """What this PR shares with one other open PR."""

    pr: OpenPR
    issues: frozenset[IssueRef]
    hunks: frozenset[Hunk]


def run(ctx: Context) -> list[Finding]:
    return [_finding(ctx, o) for o in overlaps(ctx)]


def overlaps(ctx: Context) -> list[Overlap]:
    mine = own_issues(ctx.pr)
    own_hunks, theirs = _hunks_by_pr(ctx)
    found = []
    for pr in ctx.open_prs:
        issues = mine & closing_issues(f"{pr.title}\n{pr.body}")
        shared = own_hunks & theirs.get(pr.head, frozenset())
        if shared and stacked(ctx.git, ctx.head.commit, pr.head):
            shared = frozenset()
        if issues or shared:
            found.append(Overlap(pr, issues, shared))
    return found


def own_issues(pr: PullRequestInfo) -> frozenset[IssueRef]:
    """What the PR under review closes: by its title and body, else (no body given, as on the
    command line) by its commits' messages."""
    texts = [pr.title, pr.body] if pr.body.strip() else [pr.title, *(c.message for c in pr.commits)]
    return frozenset(ref for text in texts for ref in closing_issues(text))


def _hunks_by_pr(ctx: Context) -> tuple[frozenset[Hunk], dict[str, frozenset[Hunk]]]:
    """This PR's hunks in its charts' files, and each other PR's in the files both changed."""
    paths = chart_paths((c.path for c in ctx.changes), [c.path for c in ctx.charts])
    own = frozenset(
        h
        for path in paths
        for h in hunks(path, ctx.base.text(_old_path(ctx, path)), ctx.head.text(path))
    )
    if not own:
        return own, {}
    changed = {h.path for h in own}
    others = touched(ctx.git, ctx.target.commit, ctx.open_prs, sorted(changed))
    theirs = {
        head: frozenset(h for path, s in sides.items() for h in hunks(path, s.before, s.after))
        for head, sides in others.items()
    }
    return own, theirs


def _old_path(ctx: Context, path: str) -> str:
    change = ctx.changed(path)
    return change.old_path if change is not None and change.old_path else path


def _finding(ctx: Context, overlap: Overlap) -> Finding:
    pr, who = overlap.pr, describe(overlap.pr)
    issues = ", ".join(sorted(i.shown() for i in overlap.issues))
    shared = sorted(overlap.hunks, key=lambda h: (h.path, h.removed, h.added))
    files = ", ".join(dict.fromkeys(h.path for h in shared))
    said = [SAYS_ISSUE.format(issues=issues)] if overlap.issues else []
    if shared:
        shown = "; ".join(f"{h.path}: {h.describe()}" for h in shared[:HUNKS_SHOWN])
        more = len(shared) - HUNKS_SHOWN
        said.append(SAYS_CHANGE.format(hunks=shown + (f"; {more} more" if more > 0 else "")))
    order, first = opened_first(ctx.pr, pr)
    message = f"{who} {' and '.join(said)}." + (f" {order}." if order else "")
    title = (
        TITLE_ISSUE.format(who=who, issues=issues)
        if overlap.issues
        else TITLE_CHANGE.format(who=who, files=files)
    )
    where = shared[0] if shared else None
    return Finding(
        check=NAME,
        severity=SEVERITY,
        rule=SAME_ISSUE if overlap.issues else SAME_CHANGE,
        title=title,
        message=message + MSG_END,
        chart=_chart_of(ctx, where.path) if where else None,
        path=where.path if where else None,
        line=_line_of(ctx, where) if where else None,
        data={
            "pr": pr.number or None,
            "ref": pr.ref or None,
            "title": pr.title,
            "created_at": pr.created_at or None,
            "opened_first": first,
            "issues": sorted(i.shown() for i in overlap.issues),
            "files": list(dict.fromkeys(h.path for h in shared)),
            "hunks": [{"path": h.path, "removed": h.removed, "added": h.added} for h in shared],
        },
    )


def describe(pr: OpenPR) -> str:
    if not pr.number:
        return f"branch {pr.ref or pr.head[:12]}"
    return f"#{pr.number} “{pr.title}”" if pr.title else f"#{pr.number}"


def opened_first(this: PullRequestInfo, other: OpenPR) -> tuple[str, str | None]:
    """Which of the two came first, said, and as `this`/`other` (None when not known). GitHub
    numbers a repository's issues and PRs in the order they are opened, so the numbers decide;
    without this PR's number, the other's opening date is all there is to say."""
    opened = f"opened {other.created_at[:10]}" if other.created_at else ""
    if this.number and other.number:
        if other.number < this.number:
            return ", ".join(filter(None, [f"#{other.number} was opened first", opened])), "other"
        return f"This PR was opened first, #{other.number} after it", "this"
    return (f"#{other.number} was {opened}" if opened and other.number else ""), None


def _chart_of(ctx: Context, path: str) -> str | None:
    return next((c.path for c in ctx.charts if path.startswith(c.path.rstrip("/") + "/")), None)


def _line_of(ctx: Context, hunk: Hunk) -> int | None:
    """The head line where the shared hunk's added lines begin, when it adds any."""
    text = ctx.head.text(hunk.path)
    if not hunk.added or text is None:
        return None
    lines, size = text.splitlines(), len(hunk.added)
    return next(
        (n + 1 for n in range(len(lines) - size + 1) if tuple(lines[n : n + size]) == hunk.added),
        None,
    )


def explain(ctx: Context) -> list[str]:
    return [f"{NAME}: compared with {len(ctx.open_prs)} other open PRs"]


CHECK = Check(NAME, "Duplicate PRs", run, "repo", explain=explain)
