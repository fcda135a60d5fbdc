"""The command line's Publisher: the report as markdown, JSON (schema 1), SARIF 2.1.0 or GitHub
workflow commands, or the rendered diff as plain text, to stdout or a file."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.cli.annotations import github_text
from bot.cli.errors import UsageError
from bot.cli.sarif import sarif_text
from bot.engine.diff_section import diff_plain
from bot.engine.markdown import Section, to_markdown
from bot.engine.markdown_safe import inline
from bot.engine.review import ReviewResult

EXPLAIN_HEADING = "\n### Considered and left alone\n\n"
# Every `--format` of `review`: for people, the stable JSON report, code scanning, workflow annotations.
FORMATS = ("markdown", "json", "sarif", "github")


@dataclass(frozen=True)
class ReportWriter:
    fmt: str  # one of FORMATS
    sections: Sequence[Section]
    output: str | None = None  # a file; None → stdout
    explain: bool = False
    diff: bool = False  # `--diff`: the rendered diff as plain text, in place of the report

    def publish(self, result: ReviewResult) -> None:
        write_output(self.text(result), self.output)

    def text(self, result: ReviewResult) -> str:
        if self.diff:
            return diff_plain(result.report)
        if self.fmt == "json":
            return result.report.to_json_text()
        if self.fmt == "sarif":
            return sarif_text(result.report, {s.name: s.title for s in self.sections})
        if self.fmt == "github":
            return github_text(result.report)
        text = to_markdown(result.report, self.sections)
        if self.explain and result.explanations:
            shown = (f"- {inline(line)}" for line in result.explanations)  # PR text, one line each
            text += EXPLAIN_HEADING + "\n".join(shown) + "\n"
        return text


def write_output(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text)
        except OSError as exc:
            raise UsageError(f"--output {output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
