"""The rendered diff on a terminal: per chart, its profiles grouped as the markdown groups them,
each diff coloured as `git diff` colours it; or one line per chart (the demo's screenful)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from bot.cli.terminal.text import DIM, HEADING, plain
from bot.model.markdown_safe import show_hidden
from bot.model.rendered_diff import CHANGED, UNCHANGED, ChartDiff
from bot.model.report import Report
from bot.report import diff_section
from bot.report.diff_section import SAID, SAME, groups, report_diffs, unchanged_line
from bot.textlines import git_lines

TITLE = diff_section.HEADING.lstrip("# ")  # the markdown's heading, without its `###`
# The first prefix a line starts with gives its colour; `#` is `--diff`'s line naming the chart.
LINE_STYLES = (
    ("#", "bold"),
    ("+++", "bold"),
    ("---", "bold"),
    ("@@", "cyan"),
    ("+", "green"),
    ("-", "red"),
)
CHANGED_LINE = "{chart}: {changed} of {total} changed"
# The demo names the objects a chart's diff changed, up to this many, then says how many more.
NAMED_OBJECTS = 3


def coloured(text: str) -> Text:
    """A unified diff (or `--diff`'s whole text), each line in its colour."""
    out = Text()
    for line in git_lines(text):
        style = next((s for prefix, s in LINE_STYLES if line.startswith(prefix)), "")
        out.append(show_hidden(line), style=style)
        out.append("\n")
    out.rstrip()
    return out


def diff_block(report: Report) -> Group | None:
    """The heading, then each chart's line and its profiles' diffs, a blank line before each
    diff and each chart after the first; None without a diff."""
    diffs = report_diffs(report)
    if not diffs:
        return None
    lines: list[RenderableType] = [Text(TITLE, style=HEADING)]
    for i, chart in enumerate(diffs):
        lines += [Text()] if i else []
        lines.append(plain(chart_line(chart), "bold"))
        for group in groups(chart):
            names = ", ".join(group.profiles)
            if group.status == CHANGED:
                title = SAME.format(profiles=names) if len(group.profiles) > 1 else f"{names}:"
                lines += [Text(), plain(title, DIM), coloured(group.text)]
            elif group.status != UNCHANGED or chart.changed:  # else the chart's line said it
                lines.append(plain(SAID[group.status].format(profiles=names, note=group.note)))
    return Group(*lines)


def diff_summary(report: Report) -> list[RenderableType]:
    """One line per chart: unchanged, or which objects changed on how many profiles."""
    out: list[RenderableType] = []
    for chart in report_diffs(report):
        line = chart_line(chart)
        keys = changed_objects(chart)
        if keys:
            named = ", ".join(keys[:NAMED_OBJECTS])
            more = f" and {len(keys) - NAMED_OBJECTS} more" if len(keys) > NAMED_OBJECTS else ""
            line = f"{line}: {named}{more}"
        out.append(Text.assemble((f"{TITLE}: ", DIM), plain(line)))
    return out


def chart_line(chart: ChartDiff) -> str:
    line = unchanged_line(chart, chart.chart)
    if line is not None:
        return line
    changed = sum(p.status == CHANGED for p in chart.profiles)
    total = len(chart.profiles)
    return CHANGED_LINE.format(
        chart=chart.chart, changed=changed, total=f"{total} profile{'' if total == 1 else 's'}"
    )


def changed_objects(chart: ChartDiff) -> list[str]:
    """`Kind/namespace/name` of every object a profile's diff changed, in the order first seen."""
    keys = (o.key for p in chart.profiles if p.status == CHANGED for o in p.objects)
    return list(dict.fromkeys(keys))
