"""The report as text in each of `review`'s formats, for the command line's output and the Action's
`output-file` alike: markdown (with `--explain`'s lines), the JSON report (schema 1), SARIF 2.1.0,
GitHub workflow commands, or the rendered diff as plain text."""

from __future__ import annotations

from collections.abc import Sequence

from bot.model.check import Section
from bot.model.markdown_safe import inline
from bot.model.report import Report
from bot.report.annotations import github_text
from bot.report.diff_section import diff_plain
from bot.report.markdown import to_markdown
from bot.report.sarif import TextAt, category, sarif_text

EXPLAIN_HEADING = "\n### Considered and left alone\n\n"
# Every `--format` of `review`: for people, the stable JSON report, code scanning, workflow annotations.
FORMATS = ("markdown", "json", "sarif", "github")


def report_text(
    report: Report,
    fmt: str | None,
    sections: Sequence[Section],
    head_text: TextAt,
    explanations: Sequence[str] = (),
    diff: bool = False,
    sarif_category: str = category(),
) -> str:
    """`fmt` one of FORMATS (None: markdown); `head_text` reads the head's files (SARIF quotes the
    lines it points at); `explanations` the lines `--explain` adds to markdown."""
    if diff:
        return diff_plain(report)
    if fmt == "json":
        return report.to_json_text()
    if fmt == "sarif":
        titles = {s.name: s.title for s in sections}
        keys = {s.name: s.options_key for s in sections}
        return sarif_text(report, titles, head_text, sarif_category, keys)
    if fmt == "github":
        return github_text(report)
    text = to_markdown(report, sections)
    if explanations:
        shown = (f"- {inline(line)}" for line in explanations)  # PR text, one line each
        text += EXPLAIN_HEADING + "\n".join(shown) + "\n"
    return text
