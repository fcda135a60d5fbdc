"""The `duplicates` check: another open PR that closes the same issue, or makes the same change, as
this one. Two PRs that fix the same thing cost a reviewer a day; saying so before either is
reviewed costs nothing. Which PRs are open: [review.md](review.md#other-open-prs).

The same issue: GitHub's closing keywords (close/closes/closed, fix/fixes/fixed,
resolve/resolves/resolved) with `#N`, `owner/name#N` or an issue URL, in the title or body; text in
code blocks and HTML comments does not count, and "see #12" closes nothing. Other PRs' bodies are
read for closing keywords only where they name an issue number this PR closes. In the App the
bodies come from GitHub; on the command line from `--pr-body-of N=FILE`, else the PR branch's
commit messages.

The same change is either of two things. The same hunk: the same removed and the same added lines
of the same chart file in both PRs' diffs against their merge bases with the target. A PR stacked on
the other carries its changes without duplicating them, so it is left alone; a shared version bump
alone, lines that only echo it (such as `helm.sh/chart` in committed rendered examples) and lines
of the rendered diff's noise such as `checksum/*` are no duplicate. Or the same rendered change: an
object changed the same way on the same profile, measured from this review's base, however it is
written (one PR in `values.yaml`, the other in the template; checks/duplicates/objects.py). For
that, up to 5 other open PRs that change a file of the same chart are rendered against this PR's
base, on the profiles this PR changes (lint off, the render cache shared; bot/charts/
other_renders.py), and of those only where the text the other PR changed could render this PR's
change: a fragment of text this PR typed, new to the chart and shown in a changed object, reaches
another PR's render only through a file that PR changed, so a profile whose changed objects need a
fragment none of its files hold is not rendered for it (`bot/charts/duplicate_evidence.py`; what
Helm computes, a checksum or base64, is never such a fragment, and a chart with a vendored subchart
archive gets no such shortcut).

A duplicate is a warning naming the other PR, which was opened first, and what they share
(`data.shared`: `issues`, `hunks`, `objects`); a shared hunk that renders differently, where the
other PR was rendered, is weaker evidence: only a notice. An open PR whose chart tree the archive
pre-check refuses (an archive past the reader's caps, a link leaving the chart) was not rendered: it
is left out of the comparison, with a notice (`not-compared`, naming why)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from bot.model.chart_files import read_chart_meta
from bot.model.check import Check, Need
from bot.model.context import Context, OpenPR, PullRequestInfo
from bot.model.report import Finding, Severity
from bot.textlines import git_lines
from checks.duplicates.hunks import Hunk, hunks
from checks.duplicates.keywords import IssueRef, closing_issues
from checks.duplicates.objects import ObjectChange, shared_changes
from checks.duplicates.others import chart_paths, stacked, touched

NAME = "duplicates"
SAME_ISSUE, SAME_CHANGE, NOT_COMPARED = "same-issue", "same-change", "not-compared"
SEVERITY = Severity.WARNING
WEAKER = Severity.NOTICE  # the same lines, rendering differently
# How many shared hunks, and objects, a message spells out; the data lists them all.
HUNKS_SHOWN = 3
# The evidence a finding has, in `data.shared`.
ISSUES, HUNKS, OBJECTS = "issues", "hunks", "objects"

TITLE_ISSUE = "{who} also closes {issues}"
TITLE_CHANGE = "{who} makes the same change to {files}"
TITLE_RENDERED = "{who} makes the same rendered change to {objects}"
SAYS_ISSUE = "closes {issues} too"
SAYS_CHANGE = "makes the same edit to the same lines: {hunks}"
SAYS_OBJECTS = "renders the same change to {objects}"
SAYS_DIFFERS = " What the two render differs, though, so they may share only these lines."
MSG_END = " One of the two is likely redundant: compare them before reviewing both."


@dataclass(frozen=True)
class Overlap:
    """What this PR shares with one other open PR."""

    pr: OpenPR
    issues: frozenset[IssueRef]
    hunks: frozenset[Hunk]
    objects: frozenset[ObjectChange] = frozenset()
    differs: bool = False  # the other PR was rendered: the shared hunks render differently

    @property
    def shared(self) -> list[str]:
        kinds = ((ISSUES, self.issues), (HUNKS, self.hunks), (OBJECTS, self.objects))
        return [name for name, evidence in kinds if evidence]


def run(ctx: Context) -> list[Finding]:
    left_out = refused(ctx)
    notices = [_not_compared(pr, chart, why) for pr, (chart, why) in left_out.items()]
    compared = replace(ctx, open_prs=tuple(pr for pr in ctx.open_prs if pr not in left_out))
    return notices + [_finding(compared, o) for o in overlaps(compared)]


def refused(ctx: Context) -> dict[OpenPR, tuple[str, str]]:
    """The open PRs whose chart tree the pre-check refused (bot/charts/other_renders.py): each
    with the chart and why."""
    found = {}
    for pr in ctx.open_prs:
        for chart in ctx.other_renders.get(pr.head, ()):
            why = chart.refused.get("head")
            if why is not None:
                found[pr] = (chart.path, why)
    return found


def _not_compared(pr: OpenPR, chart: str, why: str) -> Finding:
    who = describe(pr)
    return Finding(
        check=NAME,
        severity=Severity.NOTICE,
        rule=NOT_COMPARED,
        title=f"{who} was not compared: its chart tree is refused",
        message=f"{who} changes {chart} too, but its tree there is refused ({why}). It was left "
        "out of the comparison: whether it duplicates this PR is not known.",
        chart=chart,
        data={"pr": pr.number or None, "ref": pr.ref or None, "why": why},
    )


def overlaps(ctx: Context) -> list[Overlap]:
    if not ctx.open_prs:
        return []  # nothing to overlap with: no hunk of this PR's is read (a replay, a CLI run)
    mine = own_issues(ctx.pr)
    own_hunks, theirs = _hunks_by_pr(ctx)
    found = []
    for pr in ctx.open_prs:
        issues = shared_issues(mine, f"{pr.title}\n{pr.body}")
        shared = own_hunks & theirs.get(pr.head, frozenset())
        objects, rendered = shared_changes(ctx, pr)
        if (shared or objects) and stacked(ctx.git, ctx.head.commit, pr.head):
            shared, objects = frozenset(), frozenset()
        differs = (
            bool(shared) and not objects and any(_chart_of(ctx, h.path) in rendered for h in shared)
        )
        if issues or shared or objects:
            found.append(Overlap(pr, issues, shared, objects, differs))
    return found


def shared_issues(mine: frozenset[IssueRef], text: str) -> frozenset[IssueRef]:
    """The issues of `mine` that `text` closes too. Read only where it names one of their numbers:
    hundreds of open PRs' bodies, most of which close nothing this PR closes (a PR that closes
    nothing, most of them, reads none)."""
    if not any(str(ref.number) in text for ref in mine):
        return frozenset()
    return mine & closing_issues(text)


def own_issues(pr: PullRequestInfo) -> frozenset[IssueRef]:
    """What the PR under review closes: by its title and body, else (no body given, as on the
    command line) by its commits' messages."""
    texts = [pr.title, pr.body] if pr.body.strip() else [pr.title, *(c.message for c in pr.commits)]
    return frozenset(ref for text in texts for ref in closing_issues(text))


def _hunks_by_pr(ctx: Context) -> tuple[frozenset[Hunk], dict[str, frozenset[Hunk]]]:
    """This PR's hunks in its charts' files, and each other PR's in the files both changed."""
    paths = chart_paths((c.path for c in ctx.changes), [c.path for c in ctx.charts])
    noise = (*ctx.config.diff.ignore_labels, *ctx.config.diff.ignore_annotations)
    own = frozenset(
        h
        for path in paths
        for h in hunks(
            path,
            ctx.base.text(_old_path(ctx, path)),
            ctx.head.text(path),
            _moves(ctx, path),
            noise,
        )
    )
    if not own:
        return own, {}
    changed = {h.path for h in own}
    charts = [c.path for c in ctx.charts]
    others = touched(ctx.git, ctx.target.commit, ctx.open_prs, sorted(changed), charts)
    theirs = {
        head: frozenset(h for path, s in sides.items() for h in hunks(path, s.before, s.after))
        for head, sides in others.items()
    }
    return own, theirs


def _moves(ctx: Context, path: str) -> tuple[tuple[str, str], ...]:
    """The PR's (old, new) version and appVersion of the chart holding `path`."""
    chart = _chart_of(ctx, path)
    if chart is None:
        return ()
    base, head = read_chart_meta(ctx.base, chart), read_chart_meta(ctx.head, chart)
    if base is None or head is None:
        return ()
    pairs = ((base.version, head.version), (base.app_version, head.app_version))
    return tuple((old, new) for old, new in pairs if old and new)


def _old_path(ctx: Context, path: str) -> str:
    change = ctx.changed(path)
    return change.old_path if change is not None and change.old_path else path


def _finding(ctx: Context, overlap: Overlap) -> Finding:
    pr, who = overlap.pr, describe(overlap.pr)
    issues = ", ".join(sorted(i.shown() for i in overlap.issues))
    shared = sorted(overlap.hunks, key=lambda h: (h.path, h.removed, h.added))
    objects = _objects(overlap.objects)
    files = ", ".join(dict.fromkeys(h.path for h in shared))
    order, first = opened_first(ctx.pr, pr)
    message = f"{who} {' and '.join(_said(issues, shared, objects))}." + (
        f" {order}." if order else ""
    )
    if overlap.issues:
        title = TITLE_ISSUE.format(who=who, issues=issues)
    elif shared:
        title = TITLE_CHANGE.format(who=who, files=files)
    else:
        title = TITLE_RENDERED.format(who=who, objects=_shown(objects))
    weaker = overlap.differs and not overlap.issues
    chart, path, line = _where(ctx, shared, overlap.objects)
    return Finding(
        check=NAME,
        severity=WEAKER if weaker else SEVERITY,
        rule=SAME_ISSUE if overlap.issues else SAME_CHANGE,
        title=title,
        message=message + (SAYS_DIFFERS if overlap.differs else "") + MSG_END,
        chart=chart,
        path=path,
        line=line,
        data={
            "pr": pr.number or None,
            "ref": pr.ref or None,
            "title": pr.title,
            "created_at": pr.created_at or None,
            "opened_first": first,
            "shared": overlap.shared,
            "issues": sorted(i.shown() for i in overlap.issues),
            "files": list(dict.fromkeys(h.path for h in shared)),
            "hunks": [{"path": h.path, "removed": h.removed, "added": h.added} for h in shared],
            "objects": objects,
            "renders_differ": overlap.differs,
        },
    )


def _said(issues: str, shared: list[Hunk], objects: list[dict[str, Any]]) -> list[str]:
    said = [SAYS_ISSUE.format(issues=issues)] if issues else []
    if shared:
        shown = "; ".join(f"{h.path}: {h.describe()}" for h in shared[:HUNKS_SHOWN])
        more = len(shared) - HUNKS_SHOWN
        said.append(SAYS_CHANGE.format(hunks=shown + (f"; {more} more" if more > 0 else "")))
    if objects:
        said.append(SAYS_OBJECTS.format(objects=_shown(objects)))
    return said


def _objects(changes: frozenset[ObjectChange]) -> list[dict[str, Any]]:
    """The shared object changes, one entry per chart and object with the profiles it has."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for c in sorted(changes, key=lambda c: (c.chart, c.key, c.profile)):
        grouped.setdefault((c.chart, c.key), []).append(c.profile)
    return [{"chart": ch, "object": key, "profiles": ps} for (ch, key), ps in grouped.items()]


def _shown(objects: list[dict[str, Any]]) -> str:
    """`Deployment/default/release-api (profile default)`, the first few of them."""
    parts = [
        f"{o['object']} (profile{'s' if len(o['profiles']) > 1 else ''} {', '.join(o['profiles'])})"
        for o in objects[:HUNKS_SHOWN]
    ]
    more = len(objects) - HUNKS_SHOWN
    return "; ".join(parts) + (f"; {more} more" if more > 0 else "")


def _where(
    ctx: Context, shared: list[Hunk], objects: frozenset[ObjectChange]
) -> tuple[str | None, str | None, int | None]:
    """The chart, file and line a finding points at: the first shared hunk's, else the first
    shared object's template (no line: the object is what is shared, not a line)."""
    if shared:
        return _chart_of(ctx, shared[0].path), shared[0].path, _line_of(ctx, shared[0])
    first = min(objects, key=lambda c: (c.chart, c.key, c.profile), default=None)
    if first is None:
        return None, None, None
    return first.chart, first.template or None, None


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
    lines, size = git_lines(text), len(hunk.added)
    return next(
        (n + 1 for n in range(len(lines) - size + 1) if tuple(lines[n : n + size]) == hunk.added),
        None,
    )


def explain(ctx: Context) -> list[str]:
    left_out = {pr.head for pr in refused(ctx)}
    rendered = (
        ", ".join(_pr_of(ctx, head) for head in ctx.other_renders if head not in left_out) or "none"
    )
    return [
        f"{NAME}: compared with {len(ctx.open_prs)} other open PRs; rendered for their change to "
        f"the same charts: {rendered}"
    ]


def _pr_of(ctx: Context, head: str) -> str:
    return next((describe(pr) for pr in ctx.open_prs if pr.head == head), head[:12])


CHECK = Check(
    NAME, "Duplicate PRs", run, "repo", explain=explain, needs=frozenset({Need.OTHER_RENDERS})
)
