"""The rendered diff for people: a markdown section (the report, the summary comment) with one
collapsed block per chart, and the plain text `chart-review review --diff` prints.

Profiles whose diffs are the same are shown once ("`aks`, `eks`: same diff"). Within a limit (a
comment's), whole lines are kept and every fence and block is closed, then a note says how much was
left out and what prints it all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.model.markdown_safe import code, no_workflow_command, one_line, show_hidden
from bot.model.rendered_diff import (
    ADDED,
    CHANGED,
    NOT_COMPARED,
    REMOVED,
    UNCHANGED,
    ChartDiff,
    chart_diff,
)
from bot.model.report import Report
from bot.textlines import git_lines, line_count

HEADING = "### Rendered diff"
# GitHub renders markdown inside <details> only after a blank line that ends the HTML block.
FOLD = "<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
NO_CHANGE_CHART = "{chart}: no change in the rendered manifests"
# A chart with profiles that could not be compared has no "no change" to say (issue 38: a chart that
# rendered on no profile read "no change in the rendered manifests").
PARTLY_COMPARED_CHART = "{chart}: no change where compared; not compared on {missed} of {total}"
NOTHING_RENDERED_CHART = "{chart}: not compared, nothing was rendered"
NOT_COMPARED_CHART = "{chart}: not compared on any profile"
SAME = "{profiles}: same diff"
SAID = {
    UNCHANGED: "{profiles}: no change",
    ADDED: "{profiles}: new profile, nothing to compare with",
    REMOVED: "{profiles}: profile removed",
    NOT_COMPARED: "{profiles}: not compared, {note}",
}
LEFT_OUT = "{profiles}: diff left out"
CUT_LINE = "…"
CUT_NOTE = "… {lines:,} more {noun} of the rendered diff left out; the whole diff: {where}"
# Where the whole diff is when nothing else holds it: the command that prints it, on any checkout.
DIFF_COMMAND = "`chart-review review --base {base} --head {head} --diff`"
FENCE_INFO = "diff"
MIN_FENCE = 3
NEWLINE = "\n"


@dataclass(frozen=True)
class Group:
    """Profiles of one chart that say the same: the same diff, or the same one line."""

    profiles: tuple[str, ...]
    status: str
    text: str = ""
    note: str = ""


def groups(chart: ChartDiff) -> list[Group]:
    """In the order their first profile comes (profiles are sorted by name)."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for p in chart.profiles:
        found.setdefault((p.status, p.text, p.note), []).append(p.profile)
    return [Group(tuple(names), s, t, n) for (s, t, n), names in found.items()]


def report_diffs(report: Report) -> list[ChartDiff]:
    found = (chart_diff(c.path, c.extra) for c in report.charts)
    return [d for d in found if d is not None]


# -- markdown ---------------------------------------------------------------------------------


def diff_markdown(report: Report, limit: int | None = None, where: str | None = None) -> str:
    """The section, or "" when the review computed no diff. Within `limit` characters when given,
    each diff then showing at most as many lines as lets all fit: a small diff is shown whole
    beside a large one, which is cut ("" when not even the headings fit). A cut says `where` the
    whole diff is (markdown), by default the command that prints it."""
    diffs = report_diffs(report)
    if not diffs:
        return ""
    where = where or diff_command(report)
    longest = max((_line_count(g.text) for d in diffs for g in groups(d)), default=0)
    full = _markdown(diffs, longest, where)
    if limit is None or len(full) <= limit:
        return full
    # The length grows with the cap: the largest cap that fits, by bisection, ~17 renders of at
    # most a comment's length each (the cap never passes what `limit` characters could hold).
    fits, too_many = -1, min(longest, limit)  # _markdown(.., fits) is within limit; -1: none is
    while too_many - fits > 1:
        middle = (fits + too_many) // 2
        if len(_markdown(diffs, middle, where)) <= limit:
            fits = middle
        else:
            too_many = middle
    return _markdown(diffs, fits, where) if fits >= 0 else ""


def diff_command(report: Report) -> str:
    return DIFF_COMMAND.format(base=report.base[:12], head=report.head[:12])


def _markdown(diffs: Sequence[ChartDiff], cap: int, where: str) -> str:
    """The section showing at most `cap` lines of each diff, then a note for the lines left out."""
    parts = [HEADING, *(_chart_markdown(d, cap) for d in diffs)]
    left_out = sum(max(0, _line_count(g.text) - cap) for d in diffs for g in groups(d))
    if left_out:
        parts.append(CUT_NOTE.format(lines=left_out, noun=_plural(left_out, "line"), where=where))
    return "\n\n".join(parts)


def unchanged_line(chart: ChartDiff, name: str) -> str | None:
    """The one line for a chart none of whose profiles changed: "no change" only where every
    profile was compared; None for a chart with a change."""
    if chart.changed:
        return None
    if not chart.profiles:
        return NOTHING_RENDERED_CHART.format(chart=name)
    missed = sum(p.status != UNCHANGED for p in chart.profiles)
    if not missed:
        return NO_CHANGE_CHART.format(chart=name)
    if missed == len(chart.profiles):
        return NOT_COMPARED_CHART.format(chart=name)
    total = len(chart.profiles)
    return PARTLY_COMPARED_CHART.format(
        chart=name, missed=missed, total=f"{total} {_plural(total, 'profile')}"
    )


def _chart_markdown(chart: ChartDiff, cap: int) -> str:
    name = f"**{code(chart.chart)}**"
    line = unchanged_line(chart, name)
    if line is not None:
        said = (_group_markdown(g, cap) for g in groups(chart) if g.status != UNCHANGED)
        return "\n\n".join([line, *said])
    body = "\n\n".join(_group_markdown(g, cap) for g in groups(chart))
    changed, total = sum(p.status == CHANGED for p in chart.profiles), len(chart.profiles)
    head = f"{name}: {changed} of {total} {_plural(total, 'profile')} changed"
    return f"{head}\n\n{FOLD.format(summary=_fold_summary(chart), body=body)}"


def _group_markdown(group: Group, cap: int) -> str:
    names = ", ".join(code(p) for p in group.profiles)
    if group.status != CHANGED:
        return SAID[group.status].format(profiles=names, note=group.note)
    if cap <= 0:
        return LEFT_OUT.format(profiles=names)
    lines = git_lines(group.text)
    shown = lines[:cap] + ([CUT_LINE] if len(lines) > cap else [])
    title = SAME.format(profiles=names) if len(group.profiles) > 1 else f"{names}:"
    return f"{title}\n\n{fenced(NEWLINE.join(shown))}"


def _fold_summary(chart: ChartDiff) -> str:
    keys = {o.key for p in chart.profiles if p.status == CHANGED for o in p.objects}
    return f"{len(keys)} {_plural(len(keys), 'object')} changed"


def fenced(text: str) -> str:
    """PR-derived text as a fenced block that shows it literally: the fence is longer than any
    backtick run inside (CommonMark closes a fence on a run at least as long), and hidden or
    reordering characters are shown, as nothing inside a fence renders but they still would."""
    text = _no_commands(show_hidden(text))
    longest = max((len(m) for m in re.findall("`+", text)), default=0)
    fence = "`" * max(MIN_FENCE, longest + 1)
    return f"{fence}{FENCE_INFO}\n{text}\n{fence}"


def _plural(n: int, noun: str) -> str:
    return noun if n == 1 else noun + "s"


def _line_count(text: str) -> int:
    return line_count(text)


# -- plain text -------------------------------------------------------------------------------


def diff_plain(report: Report) -> str:
    """Every chart's diff as `git diff` would print it, each group under a `#` line naming the
    chart and its profiles; a chart or profile without change is its one `#` line."""
    out = []
    for d in report_diffs(report):
        chart = one_line(d.chart)
        line = unchanged_line(d, chart)
        if line is not None:
            out.append(f"# {line}\n")
            for g in groups(d):
                if g.status != UNCHANGED:
                    names = ", ".join(g.profiles)
                    said = SAID[g.status].format(profiles=names, note=g.note)
                    out.append(f"# {chart}: {said}\n")
            continue
        for g in groups(d):
            names = ", ".join(map(one_line, g.profiles))
            if g.status != CHANGED:
                out.append(f"# {chart}: {SAID[g.status].format(profiles=names, note=g.note)}\n")
            else:
                title = SAME.format(profiles=names) if len(g.profiles) > 1 else names
                out.append(f"# {chart}: {title}\n{_no_commands(g.text)}")
    return "".join(out)


def _no_commands(text: str) -> str:
    return "\n".join(map(no_workflow_command, text.split("\n")))
