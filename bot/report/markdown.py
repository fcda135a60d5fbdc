"""The report for people: a summary line, then one section per check, tables where they read better."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot.model.check import Section
from bot.model.markdown_safe import cell, cell_code, code, inline
from bot.model.report import ChartSummary, Finding, Report, headline, icon
from bot.report.diff_section import diff_markdown

FOLDED = "{count} already at base, unchanged"
# GitHub renders markdown inside <details> only after a blank line that ends the HTML block.
DETAILS = "<details><summary>{summary}</summary>\n\n{body}\n\n</details>"
AT_BASE = "{count} already at base"
NO_NEW = "no new findings"
SILENT = "No findings: {checks}."


def findings_table(findings: Sequence[Finding]) -> str:
    rows = ["| | chart | profile | finding | where |", "| --- | --- | --- | --- | --- |"]
    for f in findings:
        where = cell_code(f"{f.path}:{f.line}" if f.line else f.path) if f.path else ""
        rows.append(
            f"| {icon(f.severity)} | {cell(f.chart or '')} | {cell(f.profile or '')} "
            f"| **{cell(f.title)}**<br>{cell(f.message)} | {where} |"
        )
    return "\n".join(rows)


def folded_table(findings: Sequence[Finding]) -> str:
    """The rows of findings already at base: their titles and where, no icon (all are notices) and
    no message (the check run's text and the JSON hold it), so the fold stays short."""
    rows = ["| chart | profile | finding | where |", "| --- | --- | --- | --- |"]
    for f in findings:
        where = cell_code(f"{f.path}:{f.line}" if f.line else f.path) if f.path else ""
        rows.append(
            f"| {cell(f.chart or '')} | {cell(f.profile or '')} | {cell(f.title)} | {where} |"
        )
    return "\n".join(rows)


def split_new(findings: Sequence[Finding]) -> tuple[list[Finding], list[Finding]]:
    """(the PR's findings, those already at base), each in the order given."""
    return [f for f in findings if not f.preexisting], [f for f in findings if f.preexisting]


def folded(count: int, body: str) -> str:
    """`count` findings already at base as one line, their `body` collapsed under it."""
    return DETAILS.format(summary=FOLDED.format(count=count), body=body)


def fold_headline(findings: Sequence[Finding]) -> str:
    """The counts of the PR's findings by severity, then how many were already at base: `1 failure;
    8 already at base`. Without any of those, exactly `headline`."""
    new, old = split_new(findings)
    if not old:
        return headline(findings)
    return f"{headline(new) if new else NO_NEW}; {AT_BASE.format(count=len(old))}"


def verdict_icon(report: Report) -> str:
    """❌ a failure, ⚠️ a chart not reviewed (never a pass), else ✅."""
    return "❌" if report.failed else "⚠️" if report.not_reviewed else "✅"


def summary_line(report: Report) -> str:
    verdict = verdict_icon(report)
    return f"{verdict} chart-review: {fold_headline(report.findings)}{not_reviewed_note(report)}"


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
        profiles = inline(", ".join(c.profiles)) or "none"
        parts.append(f"{code(c.path)} ({version_phrase(c, inline)}; profiles {profiles})")
    return "Charts: " + "; ".join(parts)


def version_phrase(chart: ChartSummary, quote: Callable[[str], str]) -> str:
    """`1.2.0 → 1.3.0`, `1.3.0`, `new at 1.3.0` or `removed at 1.2.0`, each version `quote`d."""
    base, head = quote(chart.version_base or ""), quote(chart.version_head or "")
    if chart.version_base is None:
        return f"new at {head}"
    if chart.version_head is None:
        return f"removed at {base}"
    return head if chart.version_base == chart.version_head else f"{base} → {head}"


def capabilities(report: Report) -> Mapping[str, Any]:
    """What `.Capabilities` held (bot/render/probe.py says it), the same for every chart of a
    review: `kube_version`, `kube_version_default`, `api_versions`; empty when unknown."""
    return next((c.extra["capabilities"] for c in report.charts if c.extra.get("capabilities")), {})


def rendered_for(report: Report) -> str:
    """`. Rendered for Kubernetes v1.36.0 (Helm's default).`, after the charts line: what
    `.Capabilities` held, the same for every chart of a review (bot/render/probe.py says it)."""
    caps = capabilities(report)
    version = caps.get("kube_version")
    if not version:
        return ""
    default = " (Helm's default)" if caps.get("kube_version_default") else ""
    apis = caps.get("api_versions") or ()
    extra = (
        f", with API versions {', '.join(code(a) for a in apis)} besides Helm's and the charts' CRDs"
        if apis
        else ""
    )
    return f". Rendered for Kubernetes {code(version)}{default}{extra}."


def compared_line(report: Report) -> str:
    return f"Compared {code(report.base[:12])} → {code(report.head[:12])}."


def section_markdown(
    section: Section, report: Report, shown: Sequence[Finding] | None = None
) -> str:
    """The check's heading, counting all its findings, over a body of `shown` (by default all):
    a check run whose summary would pass GitHub's limit shows the first findings only."""
    return _with_heading(section, report, section_body(section, report, shown))


def _with_heading(section: Section, report: Report, body: str) -> str:
    head = f"### {section.title}: {fold_headline(report.findings_for(section.name))}"
    return f"{head}\n\n{body}".rstrip()


def section_body(section: Section, report: Report, shown: Sequence[Finding] | None = None) -> str:
    """The check's own body (its table, or the section function's) for the PR's findings, then
    the findings already at base, folded: one line, their rows collapsed under it."""
    findings = report.findings_for(section.name)
    new, old = split_new(findings if shown is None else shown)
    if section.body is not None:
        body = section.body(new, {c.path: c.to_json() for c in report.charts})
    else:
        body = findings_table(new) if new else ""
    if old:
        count = sum(f.preexisting for f in findings)
        body = "\n\n".join(p for p in (body, folded(count, folded_table(old))) if p)
    return body


def ran(sections: Sequence[Section], report: Report) -> list[Section]:
    """The sections of the checks the review ran and that have something to show (all such, for
    a report that does not say what ran)."""
    return [
        s
        for s in sections
        if (not report.checks_run or s.name in report.checks_run) and s.shown(report)
    ]


def silent_line(titles: Sequence[str]) -> str:
    """One line for every check with nothing to say, instead of a section each."""
    return SILENT.format(checks=", ".join(titles)) if titles else ""


def to_markdown(report: Report, sections: Sequence[Section]) -> str:
    parts = [
        f"## {summary_line(report)}",
        f"{compared_line(report)} {charts_line(report)}{rendered_for(report)}",
    ]
    quiet = []
    for section in ran(sections, report):
        body = section_body(section, report)
        # Nothing found and no body of its own (QoS says "no pod changed" even then): no section.
        if not report.findings_for(section.name) and not body.strip():
            quiet.append(inline(section.title))
        else:
            parts.append(_with_heading(section, report, body))
    parts.append(silent_line(quiet))
    parts.append(diff_markdown(report))  # whole: a report has no size limit
    return "\n\n".join(p for p in parts if p) + "\n"
