"""What GitHub is sent for a report, the parts every publication shares: GitHub's limits, the
annotations, a check family's verdict and its run in the `per-check` layout.

Pure: values in, values out. The one run of the default layout is bot/report/one_run.py, the summary
comment bot/report/comment.py, which run carries what bot/report/run_layout.py; the App's publisher
(bot/app/review_pull.py) sends them through the repository client (bot/app/github/repo.py). Each
stays within GitHub's limits (tests/fixtures/github/rest-limits.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.model.markdown_safe import code, inline, prose
from bot.model.report import Finding, Report, Severity, icon
from bot.report.markdown import (
    Section,
    fold_headline,
    folded,
    not_reviewed_note,
    section_markdown,
    split_new,
)

# The default layout's one run, stable across re-runs: what branch protection requires.
CHECK_RUN_NAME = "chart-review"
# The `per-check` layout's runs, `chart-review/qos`, …: the names before the one run was default.
CHECK_RUN_PREFIX = "chart-review/"
MAX_OUTPUT_CHARS = 65535  # output.summary and output.text, each (checks/create)
ANNOTATIONS_PER_REQUEST = 50  # output.annotations per create or update (checks/update)
MAX_ANNOTATION_TITLE = 255
MAX_ANNOTATION_MESSAGE_BYTES = 64 * 1024
MAX_COMMENT_CHARS = 65536  # issue and review comment bodies
SUMMARY_MARKER = "<!-- chart-review:summary -->"  # finds the sticky comment again; invisible
CUT_NOTE = "\n\n… {cut:,} more characters cut; run `chart-review review` for the full report"
LEFT_OUT_NOTE = (
    "\n\n… {count:,} more {findings} not shown; run `chart-review review` for the full report"
)
ELLIPSIS = "…"

SUCCESS, NEUTRAL, FAILURE = "success", "neutral", "failure"


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: Severity  # GitHub's annotation_level names are the severities' own
    title: str
    message: str

    def to_api(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "annotation_level": str(self.level),
            "title": self.title,
            "message": self.message,
        }


@dataclass(frozen=True)
class CheckRunOutput:
    name: str  # the full run name, `chart-review` or `chart-review/<check>`
    conclusion: str
    title: str
    summary: str
    text: str
    annotations: tuple[Annotation, ...] = ()


def run_name(check: str) -> str:
    """A family's run name, `chart-review/<check>`; a run's own name stays as it is."""
    if check == CHECK_RUN_NAME or check.startswith(CHECK_RUN_PREFIX):
        return check
    return CHECK_RUN_PREFIX + check


def fit(text: str, limit: int) -> str:
    """`text` within `limit` characters; when cut, a closing note says how much went."""
    if len(text) <= limit:
        return text
    # The note for the whole text is at least as long as the note for any smaller cut.
    room = limit - len(CUT_NOTE.format(cut=len(text)))
    kept = text[:room]
    newline = kept.rfind("\n")
    if newline > room // 2:  # end on a whole line, so a table row or sentence is not halved
        kept = kept[:newline]
    return kept + CUT_NOTE.format(cut=len(text) - len(kept))


def fit_findings(
    render: Callable[[Sequence[Finding]], str], findings: Sequence[Finding], limit: int
) -> str:
    """`render` of as many whole findings as fit in `limit`, then a note of how many were left out:
    over the limit GitHub refuses the whole output (422), and a cut inside a finding can leave a
    table row, a code span or a message half-written. When even none fit (a section whose fixed
    part is too long), the characters are cut instead."""
    text = render(findings)
    if len(text) <= limit:
        return text
    room = limit - len(_left_out(len(findings)))
    fits, too_many = 0, len(findings)  # render(findings[:fits]) is within room; too_many is not
    while too_many - fits > 1:
        middle = (fits + too_many) // 2
        if len(render(findings[:middle])) <= room:
            fits = middle
        else:
            too_many = middle
    kept = render(findings[:fits])
    if fits == 0 or len(kept) > room:
        return fit(text, limit)
    return kept + _left_out(len(findings) - fits)


def _left_out(count: int) -> str:
    return LEFT_OUT_NOTE.format(count=count, findings="finding" if count == 1 else "findings")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)] + ELLIPSIS


def _clip_bytes(text: str, limit: int) -> str:
    data = text.encode()
    if len(data) <= limit:
        return text
    room = limit - len(ELLIPSIS.encode())
    return data[:room].decode(errors="ignore") + ELLIPSIS


def conclusion(findings: Iterable[Finding]) -> str:
    """Warnings do not fail a required check; notices alone are a success."""
    severities = {f.severity for f in findings}
    if Severity.FAILURE in severities:
        return FAILURE
    return NEUTRAL if Severity.WARNING in severities else SUCCESS


def _raw_span(text: str) -> str:
    return f"`{text}`"


def where_spans(f: Finding, span: Callable[[str], str] = code) -> str:
    """Chart, profile and subject as code spans: `code` for markdown, `_raw_span` for annotations,
    which GitHub shows as plain text (no mention, link or HTML there to defuse)."""
    parts = [
        f"chart {span(f.chart)}" if f.chart else "",
        f"profile {span(f.profile)}" if f.profile else "",
    ]
    parts.append(span(f.subject) if f.subject else "")
    return ", ".join(p for p in parts if p)


def annotation(f: Finding) -> Annotation | None:
    if not f.path or not f.line:
        return None
    where = where_spans(f, _raw_span)
    message = f"{f.message}\n\n({where})" if where else f.message
    return Annotation(
        path=f.path,
        start_line=f.line,
        end_line=f.line,
        level=f.severity,
        title=clip(f.title, MAX_ANNOTATION_TITLE),
        message=_clip_bytes(message or f.title, MAX_ANNOTATION_MESSAGE_BYTES),
    )


def _blocks(findings: Sequence[Finding]) -> str:
    """Each finding's whole message; the section's table flattens them into one cell."""
    blocks = []
    for f in findings:
        where = where_spans(f)
        place = f" — {code(f'{f.path}:{f.line}')}" if f.path and f.line else ""
        heading = f"#### {icon(f.severity)} {inline(f.title)}{place}"
        blocks.append("\n\n".join(p for p in (heading, where, prose(f.message)) if p))
    return "\n\n".join(blocks)


def details(findings: Sequence[Finding], count: int) -> str:
    """The PR's findings whole, then the `count` already at base folded under one line."""
    new, old = split_new(findings)
    parts = [_blocks(new), folded(count, _blocks(old)) if old else ""]
    return "\n\n".join(p for p in parts if p)


def family_verdict(findings: Sequence[Finding], report: Report) -> str:
    """A check family's conclusion; a chart nothing could be checked on makes every family's
    silence partial: never a pass."""
    verdict = conclusion(findings)
    return NEUTRAL if verdict == SUCCESS and report.not_reviewed else verdict


def worst(conclusions: Iterable[str]) -> str:
    found = set(conclusions)
    return next((c for c in (FAILURE, NEUTRAL) if c in found), SUCCESS)


def family_output(section: Section, report: Report) -> CheckRunOutput:
    """The run of one check family, `chart-review/<check>` (the `per-check` layout)."""
    findings = report.findings_for(section.name)
    notes = (annotation(f) for f in findings)
    old = sum(f.preexisting for f in findings)
    return CheckRunOutput(
        name=run_name(section.name),
        conclusion=family_verdict(findings, report),
        title=fold_headline(findings) + not_reviewed_note(report),
        summary=fit_findings(
            lambda shown: section_markdown(section, report, shown), findings, MAX_OUTPUT_CHARS
        ),
        text=fit_findings(lambda shown: details(shown, old), findings, MAX_OUTPUT_CHARS),
        annotations=tuple(n for n in notes if n is not None),
    )


def families(report: Report, sections: Sequence[Section]) -> list[Section]:
    """The report's check families in the order they ran, but a quiet one (rendering) only when
    it found something: a render run that always said "success" would only be noise."""
    known = {s.name: s for s in sections}
    found = [known.get(name, Section(name, name)) for name in report.checks_run]
    return [s for s in found if s.shown(report)]


def failed_output(name: str, reason: str) -> CheckRunOutput:
    """For a job that crashed: neutral, so no run stays in progress and none claims success."""
    return CheckRunOutput(
        name=run_name(name),
        conclusion=NEUTRAL,
        title="could not complete",
        summary=fit(
            f"could not complete: {inline(reason)}; will retry on the next event", MAX_OUTPUT_CHARS
        ),
        text="",
    )
