"""What GitHub is sent for a report: check runs, the summary comment and inline review comments.

Pure: values in, values out. The App's publisher (bot/app/review_pull.py) sends them through the
repository client (bot/app/github/repo.py); this module decides what they say
and keeps each within GitHub's limits (tests/fixtures/github/rest-limits.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.engine.diff_section import diff_markdown
from bot.engine.markdown import (
    Section,
    charts_line,
    compared_line,
    fold_headline,
    folded,
    not_reviewed_note,
    section_body,
    section_markdown,
    split_new,
    summary_line,
)
from bot.engine.markdown_safe import code, inline, prose
from bot.engine.report import Finding, Report, Severity, icon

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
KEY_FAILURES_PER_CHECK = 3
KEY_FAILURE_CHARS = 100
ELLIPSIS = "…"
NO_FINDINGS = "No findings"
COMMENT_FOOTER = "Details and annotations are in each `chart-review/…` check run."
# Where a comment too small for the rendered diff says the whole of it is.
DIFF_IN_RUN = "in the details of the `{run}` check run"

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
    name: str  # the full run name, `chart-review/<check>`
    conclusion: str
    title: str
    summary: str
    text: str
    annotations: tuple[Annotation, ...] = ()


def run_name(check: str) -> str:
    return check if check.startswith(CHECK_RUN_PREFIX) else CHECK_RUN_PREFIX + check


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


def _clip(text: str, limit: int) -> str:
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
        title=_clip(f.title, MAX_ANNOTATION_TITLE),
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


def _details(findings: Sequence[Finding], count: int) -> str:
    """The PR's findings whole, then the `count` already at base folded under one line."""
    new, old = split_new(findings)
    parts = [_blocks(new), folded(count, _blocks(old)) if old else ""]
    return "\n\n".join(p for p in parts if p)


def _output(section: Section, report: Report) -> CheckRunOutput:
    findings = report.findings_for(section.name)
    notes = (annotation(f) for f in findings)
    verdict = conclusion(findings)
    # A chart nothing could be checked on makes every family's silence partial: never a pass.
    if verdict == SUCCESS and report.not_reviewed:
        verdict = NEUTRAL
    old = sum(f.preexisting for f in findings)
    return CheckRunOutput(
        name=run_name(section.name),
        conclusion=verdict,
        title=fold_headline(findings) + not_reviewed_note(report),
        summary=fit_findings(
            lambda shown: section_markdown(section, report, shown), findings, MAX_OUTPUT_CHARS
        ),
        text=fit_findings(lambda shown: _details(shown, old), findings, MAX_OUTPUT_CHARS),
        annotations=tuple(n for n in notes if n is not None),
    )


def _families(report: Report, sections: Sequence[Section]) -> list[Section]:
    """The report's check families in the order they ran, but a quiet one (rendering) only when
    it found something: a render run that always said "success" would only be noise."""
    known = {s.name: s for s in sections}
    families = [known.get(name, Section(name, name)) for name in report.checks_run]
    return [s for s in families if s.shown(report)]


def check_run_outputs(report: Report, sections: Sequence[Section]) -> list[CheckRunOutput]:
    """One output per family; when the summary comment must cut the rendered diff, the first run
    whose text has room for all of it carries it whole after its findings."""
    outputs = [_output(section, report) for section in _families(report, sections)]
    diff = _diff_cut_from_comment(report, sections)
    home = _diff_home(outputs, diff)
    if home is not None:
        outputs[home] = replace(outputs[home], text=_with_diff(outputs[home].text, diff))
    return outputs


def _with_diff(text: str, diff: str) -> str:
    return f"{text}\n\n{diff}" if text else diff


def _diff_home(outputs: Sequence[CheckRunOutput], diff: str) -> int | None:
    """The run whose text (65,535 characters, as a comment's body) holds the whole diff section
    besides its own findings; None when there is no diff to place or no run has the room."""
    if not diff:
        return None
    fits = (i for i, o in enumerate(outputs) if len(_with_diff(o.text, diff)) <= MAX_OUTPUT_CHARS)
    return next(fits, None)


def _diff_cut_from_comment(report: Report, sections: Sequence[Section]) -> str:
    """The whole diff section when it is longer than the room the summary comment leaves it."""
    whole = diff_markdown(report)
    return whole if len(whole) > comment_diff_room(report, sections) else ""


def comment_diff_room(report: Report, sections: Sequence[Section]) -> int:
    """The characters the summary comment leaves its rendered diff section."""
    return _diff_room(_comment_parts(report, sections))


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


def _mark(findings: Sequence[Finding], report: Report) -> str:
    worst = min((f.severity for f in findings), key=lambda s: s.rank, default=None)
    if worst not in (Severity.FAILURE, Severity.WARNING) and report.not_reviewed:
        worst = Severity.WARNING
    return icon(worst) if worst in (Severity.FAILURE, Severity.WARNING) else "✅"


def _check_line(section: Section, report: Report) -> str:
    findings = report.findings_for(section.name)
    mark = _mark(findings, report)
    line = f"- {mark} {section.title} (`{run_name(section.name)}`): {fold_headline(findings)}"
    failures = [f.title for f in findings if f.severity is Severity.FAILURE]
    if failures:
        clipped = (_clip(t, KEY_FAILURE_CHARS) for t in failures[:KEY_FAILURES_PER_CHECK])
        shown = "; ".join(inline(t) for t in clipped)  # clipped first, so no escape is halved
        more = len(failures) - KEY_FAILURES_PER_CHECK
        line += f" — {shown}" + (f"; and {more} more" if more > 0 else "")
    return line


def summary_comment(
    report: Report, sections: Sequence[Section], diff_elsewhere: str | None = None
) -> str:
    """The sticky comment: verdict, a line per check, the rendered diff in the room the rest
    leaves. A diff cut to fit says where the whole is: a check run's details when one has room,
    else `diff_elsewhere` (markdown, e.g. the Action's artifact), else the command printing it."""
    parts = _comment_parts(report, sections)
    room = _diff_room(parts)
    diff = diff_markdown(report, room, _whole_diff_at(report, sections, diff_elsewhere))
    text = "\n\n".join([*parts, *([diff] if diff and room > 0 else []), COMMENT_FOOTER]) + "\n"
    return fit(text, MAX_COMMENT_CHARS)


def _comment_parts(report: Report, sections: Sequence[Section]) -> list[str]:
    """The comment before its diff and footer: what is never cut for the diff."""
    checks = [_check_line(s, report) for s in _families(report, sections) if not _silent(s, report)]
    checks.append(_silent_line(report, sections))
    return [
        SUMMARY_MARKER,
        f"## {summary_line(report)}",
        compared_line(report),
        charts_line(report),
        "\n".join(c for c in checks if c),
    ]


def _diff_room(parts: Sequence[str]) -> int:
    """What the comment leaves the diff section: the limit less the parts, footer and joins."""
    return MAX_COMMENT_CHARS - len("\n\n".join([*parts, COMMENT_FOOTER])) - len("\n\n\n")


def _whole_diff_at(
    report: Report, sections: Sequence[Section], elsewhere: str | None
) -> str | None:
    diff = _diff_cut_from_comment(report, sections)
    if not diff:
        return elsewhere  # the comment holds it whole: no note says where
    outputs = [_output(section, report) for section in _families(report, sections)]
    home = _diff_home(outputs, diff)
    return DIFF_IN_RUN.format(run=outputs[home].name) if home is not None else elsewhere


def _silent(section: Section, report: Report) -> bool:
    """A check with nothing to say (no finding, no section body): no line of its own. Its check
    run still exists, since branch protection may require it."""
    return not report.findings_for(section.name) and not section_body(section, report).strip()


def _silent_line(report: Report, sections: Sequence[Section]) -> str:
    """All the checks with nothing to say in one line, each with its run's name."""
    quiet = [s for s in _families(report, sections) if _silent(s, report)]
    if not quiet:
        return ""
    names = ", ".join(f"{s.title} (`{run_name(s.name)}`)" for s in quiet)
    return f"- {_mark([], report)} {NO_FINDINGS}: {names}"
