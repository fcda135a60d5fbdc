"""The default layout's one check run, `chart-review`: the worst family's verdict, a section per
check in its summary (each check's heading and table, as its own run had them), every finding
whole in its text under its check's heading, and every annotation, which GitHub takes 50 a request
(bot/app/github/checks.py sends them so). Its name never changes, whatever the review finds, so
branch protection can require it. Pure, as bot/report/bodies.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.model.report import Finding, Report
from bot.report.bodies import (
    CHECK_RUN_NAME,
    MAX_OUTPUT_CHARS,
    CheckRunOutput,
    annotation,
    details,
    families,
    family_verdict,
    fit,
    fit_findings,
)
from bot.report.markdown import (
    Section,
    charts_line,
    compared_line,
    fold_headline,
    not_reviewed_note,
    rendered_for,
    section_markdown,
)

JOIN = "\n\n"
Render = Callable[[Sequence[Finding]], str]


def shares(wants: Sequence[int], room: int) -> list[int]:
    """Each part's room out of `room`: what it wants when all fit; else the parts wanting less
    than an even share keep it and the others split what is left evenly, so that one long check
    never crowds the others' sections out of the run."""
    given = [0] * len(wants)
    left, count = room, len(wants)
    for i in sorted(range(len(wants)), key=lambda i: wants[i]):
        given[i] = max(0, min(wants[i], left // count))
        left, count = left - given[i], count - 1
    return given


def fit_parts(parts: Sequence[tuple[Render, Sequence[Finding]]], room: int) -> list[str]:
    """Each part rendered within its share of `room` (less the joins), whole findings only."""
    wants = [len(render(findings)) for render, findings in parts]
    joins = len(JOIN) * len(parts)
    caps = shares(wants, room - joins)
    return [
        fit_findings(render, found, cap) for (render, found), cap in zip(parts, caps, strict=True)
    ]


def _section_part(section: Section, report: Report) -> tuple[Render, Sequence[Finding]]:
    def render(shown: Sequence[Finding]) -> str:
        return section_markdown(section, report, shown)

    return render, report.findings_for(section.name)


def _details_part(section: Section, report: Report) -> tuple[Render, Sequence[Finding]]:
    findings = report.findings_for(section.name)
    old = sum(f.preexisting for f in findings)

    def render(shown: Sequence[Finding]) -> str:
        return f"### {section.title}{JOIN}{details(shown, old)}"

    return render, findings


def one_run_output(report: Report, sections: Sequence[Section]) -> CheckRunOutput:
    shown = families(report, sections)
    head = f"{compared_line(report)} {charts_line(report)}{rendered_for(report)}"
    summary = fit_parts([_section_part(s, report) for s in shown], MAX_OUTPUT_CHARS - len(head))
    with_findings = [s for s in shown if report.findings_for(s.name)]
    text = fit_parts([_details_part(s, report) for s in with_findings], MAX_OUTPUT_CHARS)
    notes = (annotation(f) for f in report.findings)
    return CheckRunOutput(
        name=CHECK_RUN_NAME,
        conclusion=family_verdict(report.findings, report),  # the worst family's
        title=fold_headline(report.findings) + not_reviewed_note(report),
        summary=fit(JOIN.join([head, *summary]), MAX_OUTPUT_CHARS),
        text=fit(JOIN.join(text), MAX_OUTPUT_CHARS),
        annotations=tuple(n for n in notes if n is not None),
    )
