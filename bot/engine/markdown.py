"""The report for people: a summary line, then one section per check, tables where they read better."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.engine.markdown_safe import cell, cell_code, code, inline
from bot.engine.report import Finding, Report, headline, icon

SectionFn = Callable[[Sequence[Finding], Mapping[str, Mapping[str, Any]]], str]


@dataclass(frozen=True)
class Section:
    name: str
    title: str
    body: SectionFn | None = None
    quiet: bool = False  # shown only when its check found something

    def shown(self, report: Report) -> bool:
        return not self.quiet or bool(report.findings_for(self.name))


def findings_table(findings: Sequence[Finding]) -> str:
    rows = ["| | chart | profile | finding | where |", "| --- | --- | --- | --- | --- |"]
    for f in findings:
        where = cell_code(f"{f.path}:{f.line}" if f.line else f.path) if f.path else ""
        rows.append(
            f"| {icon(f.severity)} | {cell(f.chart or '')} | {cell(f.profile or '')} "
            f"| **{cell(f.title)}**<br>{cell(f.message)} | {where} |"
        )
    return "\n".join(rows)


def summary_line(report: Report) -> str:
    verdict = "❌" if report.failed else "⚠️" if report.not_reviewed else "✅"
    return f"{verdict} chart-review: {headline(report.findings)}{not_reviewed_note(report)}"


def not_reviewed_note(report: Report) -> str:
    """`; not reviewed: charts/lib`: what a headline adds when some chart could not be checked."""
    if not report.not_reviewed:
        return ""
    return "; not reviewed: " + ", ".join(inline(c.path) for c in report.not_reviewed)


def charts_line(report: Report) -> str:
    if not report.charts:
        return "No chart changed."
    parts = []
    for c in report.charts:
        base, head = inline(c.version_base or ""), inline(c.version_head or "")
        if c.version_base is None:
            version = f"new at {head}"
        elif c.version_head is None:
            version = f"removed at {base}"
        elif c.version_base == c.version_head:
            version = head
        else:
            version = f"{base} → {head}"
        profiles = inline(", ".join(c.profiles)) or "none"
        parts.append(f"{code(c.path)} ({version}; profiles {profiles})")
    return "Charts: " + "; ".join(parts)


def compared_line(report: Report) -> str:
    return f"Compared {code(report.base[:12])} → {code(report.head[:12])}."


def section_markdown(
    section: Section, report: Report, shown: Sequence[Finding] | None = None
) -> str:
    """The check's heading, counting all its findings, over a body of `shown` (by default all):
    a check run whose summary would pass GitHub's limit shows the first findings only."""
    findings = report.findings_for(section.name)
    shown = findings if shown is None else shown
    data = {c.path: c.to_json() for c in report.charts}
    head = f"### {section.title}: {headline(findings)}"
    if section.body is not None:
        body = section.body(shown, data)
    else:
        body = findings_table(shown) if shown else ""
    return f"{head}\n\n{body}".rstrip()


def to_markdown(report: Report, sections: Sequence[Section]) -> str:
    parts = [
        f"## {summary_line(report)}",
        f"{compared_line(report)} {charts_line(report)}",
    ]
    parts += [section_markdown(s, report) for s in sections if s.shown(report)]
    return "\n\n".join(parts) + "\n"
