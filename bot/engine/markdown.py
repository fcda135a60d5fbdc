"""The report for people: a summary line, then one section per check, tables where they read better."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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


def escape_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def findings_table(findings: Sequence[Finding]) -> str:
    rows = ["| | chart | profile | finding | where |", "| --- | --- | --- | --- | --- |"]
    for f in findings:
        where = f"`{f.path}:{f.line}`" if f.path and f.line else (f"`{f.path}`" if f.path else "")
        rows.append(
            f"| {icon(f.severity)} | {escape_cell(f.chart or '')} | {escape_cell(f.profile or '')} "
            f"| **{escape_cell(f.title)}**<br>{escape_cell(f.message)} | {where} |"
        )
    return "\n".join(rows)


def summary_line(report: Report) -> str:
    verdict = "❌" if report.failed else "✅"
    return f"{verdict} chart-review: {headline(report.findings)}"


def charts_line(report: Report) -> str:
    if not report.charts:
        return "No chart changed."
    parts = []
    for c in report.charts:
        if c.version_base is None:
            version = f"new at {c.version_head}"
        elif c.version_head is None:
            version = f"removed at {c.version_base}"
        elif c.version_base == c.version_head:
            version = c.version_head
        else:
            version = f"{c.version_base} → {c.version_head}"
        parts.append(f"`{c.path}` ({version}; profiles {', '.join(c.profiles) or 'none'})")
    return "Charts: " + "; ".join(parts)


def section_markdown(section: Section, report: Report) -> str:
    findings = report.findings_for(section.name)
    data = {c.path: c.to_json() for c in report.charts}
    head = f"### {section.title}: {headline(findings)}"
    if section.body is not None:
        body = section.body(findings, data)
    else:
        body = findings_table(findings) if findings else ""
    return f"{head}\n\n{body}".rstrip()


def to_markdown(report: Report, sections: Sequence[Section]) -> str:
    parts = [
        f"## {summary_line(report)}",
        f"Compared `{report.base[:12]}` → `{report.head[:12]}`. {charts_line(report)}",
    ]
    parts += [section_markdown(s, report) for s in sections if s.shown(report)]
    return "\n\n".join(parts) + "\n"
