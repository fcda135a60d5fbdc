"""A report as a terminal shows it: the verdict line, what was compared, a heading per check that
found something with its findings under it (the PR's, then those already at base folded), the
checks with nothing to say on one line, then the rendered diff coloured.

`compact` is the demo's screenful: a line per finding (no message) and a line per chart's diff."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from bot.cli.terminal.diff import diff_block, diff_summary
from bot.cli.terminal.text import DIM, HEADING, SEVERITY_STYLE, VERDICT_STYLE, plain, prose
from bot.model.report import Finding, Report, icon
from bot.report.markdown import (
    FOLDED,
    SILENT,
    Section,
    capabilities,
    fold_headline,
    ran,
    split_new,
    verdict_icon,
    version_phrase,
)

EXPLAIN_TITLE = "Considered and left alone"
NO_CHART = "No chart changed."
SEPARATOR = " · "


def report_blocks(
    report: Report,
    sections: Sequence[Section],
    explanations: Sequence[str] = (),
    compact: bool = False,
) -> list[RenderableType]:
    """What to print, in order; the full report has a blank line between two blocks."""
    blocks: list[RenderableType] = [head_block(report, compact)]
    quiet = []
    for section in ran(sections, report):
        findings = report.findings_for(section.name)
        if findings:
            blocks.append(section_block(section, findings, compact))
        else:
            quiet.append(section.title)
    if compact:
        return [*blocks, *diff_summary(report)]
    if quiet:
        blocks.append(plain(SILENT.format(checks=", ".join(quiet)), DIM))
    diff = diff_block(report)
    if diff is not None:
        blocks.append(diff)
    if explanations:
        bullets = (Text.assemble("• ", plain(line)) for line in explanations)
        blocks.append(Group(Text(EXPLAIN_TITLE, style=HEADING), *bullets))
    return blocks


def head_block(report: Report, compact: bool) -> RenderableType:
    """The verdict, then what was compared; compact (the demo's charts are the same few), the
    verdict and the charts on one line."""
    if compact:
        return Text.assemble(verdict_line(report), (SEPARATOR, DIM), charts_part(report, DIM))
    return Group(verdict_line(report), context_line(report))


def verdict_line(report: Report) -> Text:
    mark = verdict_icon(report)
    line = Text(f"{mark} chart-review: {fold_headline(report.findings)}")
    if report.not_reviewed:
        line.append("; not reviewed: ")
        line.append_text(plain(", ".join(c.path for c in report.not_reviewed)))
    line.stylize(VERDICT_STYLE[mark])
    return line


def context_line(report: Report) -> Text:
    """`client 1.9.58 → 1.9.59 (aks, eks) · Kubernetes v1.36.0 (Helm's default) · compared …`"""
    parts = [charts_part(report)]
    caps = capabilities(report)
    if caps.get("kube_version"):
        default = " (Helm's default)" if caps.get("kube_version_default") else ""
        apis = ", ".join(caps.get("api_versions") or ())
        extra = f", with API versions {apis}" if apis else ""
        parts.append(plain(f"Kubernetes {caps['kube_version']}{default}{extra}"))
    parts.append(Text(f"compared {report.base[:12]} → {report.head[:12]}"))
    line = Text(SEPARATOR).join(parts)
    line.stylize(DIM)
    return line


def charts_part(report: Report, style: str = "") -> Text:
    """`client 1.9.58 → 1.9.59 (aks, eks)`: each chart, its versions and profiles."""
    if not report.charts:
        return Text(NO_CHART, style=style)
    out = []
    for c in report.charts:
        profiles = ", ".join(c.profiles) or "no profile"
        out.append(plain(f"{c.path} {version_phrase(c, str)} ({profiles})", style))
    return Text("; ").join(out)


def section_block(section: Section, findings: Sequence[Finding], compact: bool) -> Group:
    """The check's heading and its findings: the PR's, worst first, then those at base folded."""
    new, old = split_new(findings)
    heading = Text.assemble(plain(section.title, HEADING), f": {fold_headline(findings)}")
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for f in new:
        grid.add_row(icon(f.severity), finding_line(f) if compact else finding_text(f))
    if old:
        grid.add_row("", folded_text(old, compact))
    return Group(heading, grid)


def finding_line(f: Finding) -> Text:
    """The demo's line: the title, then where it is."""
    line = Text.assemble(plain(f.title, SEVERITY_STYLE[f.severity]))  # its style, not the line's
    if f.path:
        line.append_text(plain(f"{SEPARATOR}{where(f)}", DIM))
    return line


def finding_text(f: Finding) -> Text:
    """The title, where it is (file and line, chart, profiles), then the message."""
    out = Text.assemble(plain(f.title, SEVERITY_STYLE[f.severity]))  # its style, not the block's
    place = [p for p in (where(f), f.chart, f.profile) if p]
    if place:
        out.append("\n")
        out.append_text(plain(SEPARATOR.join(place), DIM))
    if f.message:
        out.append("\n")
        out.append_text(prose(f.message))
    return out


def folded_text(old: Sequence[Finding], compact: bool) -> Text:
    """`8 already at base, unchanged`, then (but compact) a dim line for each."""
    out = Text(FOLDED.format(count=len(old)), style=DIM)
    for f in () if compact else old:
        place = SEPARATOR.join(p for p in (f.title, where(f), f.chart, f.profile) if p)
        out.append("\n")
        out.append_text(plain(f"• {place}", DIM))
    return out


def where(f: Finding) -> str:
    if not f.path:
        return ""
    return f"{f.path}:{f.line}" if f.line else f.path


def show(console: Console, blocks: Sequence[RenderableType], spaced: bool = True) -> None:
    """Each block on its own lines, a blank line between two when `spaced`."""
    for i, block in enumerate(blocks):
        if spaced and i:
            console.print()
        console.print(block)
