"""The sticky summary comment: the verdict, a line per check, the rendered diff in the room the rest
leaves, and where the details are. One per PR, found again by its hidden marker and edited in
place. Pure, as bot/report/bodies.py."""

from __future__ import annotations

from collections.abc import Sequence

from bot.model.config import PER_CHECK, CheckRunLayout
from bot.model.markdown_safe import inline
from bot.model.report import Finding, Report, Severity, icon
from bot.report.bodies import (
    CHECK_RUN_NAME,
    MAX_COMMENT_CHARS,
    SUMMARY_MARKER,
    clip,
    families,
    fit,
    run_name,
)
from bot.report.diff_section import diff_markdown
from bot.report.markdown import (
    Section,
    charts_line,
    compared_line,
    fold_headline,
    section_body,
    summary_line,
)

KEY_FAILURES_PER_CHECK = 3
KEY_FAILURE_CHARS = 100
NO_FINDINGS = "No findings"
# Where the comment sends a reader for the details, by where the review published them.
FOOTER = {
    "one": f"Details and annotations are in the `{CHECK_RUN_NAME}` check run.",
    "per-check": "Details and annotations are in each `chart-review/…` check run.",
}
# The Action whose token may not write check runs: its job summary has the whole report.
NO_RUN_FOOTER = "Details are in the job summary of the workflow run; annotations are on the files."
COMMENT_FOOTER = FOOTER[PER_CHECK]


def _mark(findings: Sequence[Finding], report: Report) -> str:
    worst = min((f.severity for f in findings), key=lambda s: s.rank, default=None)
    if worst not in (Severity.FAILURE, Severity.WARNING) and report.not_reviewed:
        worst = Severity.WARNING
    return icon(worst) if worst in (Severity.FAILURE, Severity.WARNING) else "✅"


def _named(section: Section, layout: CheckRunLayout) -> str:
    """A check as the comment names it: with its own run's name where it has one."""
    return f"{section.title} (`{run_name(section.name)}`)" if layout == PER_CHECK else section.title


def _check_line(section: Section, report: Report, layout: CheckRunLayout) -> str:
    findings = report.findings_for(section.name)
    mark = _mark(findings, report)
    line = f"- {mark} {_named(section, layout)}: {fold_headline(findings)}"
    failures = [f.title for f in findings if f.severity is Severity.FAILURE]
    if failures:
        clipped = (clip(t, KEY_FAILURE_CHARS) for t in failures[:KEY_FAILURES_PER_CHECK])
        shown = "; ".join(inline(t) for t in clipped)  # clipped first, so no escape is halved
        more = len(failures) - KEY_FAILURES_PER_CHECK
        line += f" — {shown}" + (f"; and {more} more" if more > 0 else "")
    return line


def comment_text(
    report: Report,
    sections: Sequence[Section],
    whole_diff_at: str | None,
    layout: CheckRunLayout,
    footer: str | None = None,
) -> str:
    """The comment, its rendered diff cut to the room the rest leaves; a cut diff says where the
    whole is, `whole_diff_at` (markdown), else the command printing it."""
    parts = comment_parts(report, sections, layout)
    room = diff_room(parts, footer or FOOTER[layout])
    diff = diff_markdown(report, room, whole_diff_at)
    end = footer or FOOTER[layout]
    text = "\n\n".join([*parts, *([diff] if diff and room > 0 else []), end]) + "\n"
    return fit(text, MAX_COMMENT_CHARS)


def comment_parts(report: Report, sections: Sequence[Section], layout: CheckRunLayout) -> list[str]:
    """The comment before its diff and footer: what is never cut for the diff."""
    shown = families(report, sections)
    checks = [_check_line(s, report, layout) for s in shown if not _silent(s, report)]
    checks.append(_silent_line(report, shown, layout))
    return [
        SUMMARY_MARKER,
        f"## {summary_line(report)}",
        compared_line(report),
        charts_line(report),
        "\n".join(c for c in checks if c),
    ]


def diff_room(parts: Sequence[str], footer: str) -> int:
    """What the comment leaves the diff section: the limit less the parts, footer and joins."""
    return MAX_COMMENT_CHARS - len("\n\n".join([*parts, footer])) - len("\n\n\n")


def comment_diff_room(
    report: Report, sections: Sequence[Section], layout: CheckRunLayout = "one"
) -> int:
    """The characters the summary comment leaves its rendered diff section."""
    return diff_room(comment_parts(report, sections, layout), FOOTER[layout])


def _silent(section: Section, report: Report) -> bool:
    """A check with nothing to say (no finding, no section body): no line of its own. Its check
    run (or section) still exists, since branch protection may require it."""
    return not report.findings_for(section.name) and not section_body(section, report).strip()


def _silent_line(report: Report, shown: Sequence[Section], layout: CheckRunLayout) -> str:
    """All the checks with nothing to say in one line."""
    quiet = [s for s in shown if _silent(s, report)]
    if not quiet:
        return ""
    names = ", ".join(_named(s, layout) for s in quiet)
    return f"- {_mark([], report)} {NO_FINDINGS}: {names}"
