"""The command line's Publisher: the report as markdown, JSON (schema 1), SARIF 2.1.0 or GitHub
workflow commands, or the rendered diff as plain text, to stdout or a file; rendered for people
(bot/cli/terminal/) when no `--format` or `--output` is given and stdout is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.engine.review import ReviewResult
from bot.errors import UsageError
from bot.report.diff_section import diff_plain
from bot.report.markdown import Section
from bot.report.sarif import category
from bot.report.text import report_text


@dataclass(frozen=True)
class ReportWriter:
    fmt: str | None  # one of FORMATS; None: rendered on a terminal, else markdown
    sections: Sequence[Section]
    output: str | None = None  # a file; None → stdout
    explain: bool = False
    diff: bool = False  # `--diff`: the rendered diff as plain text, in place of the report
    sarif_category: str = category()  # SARIF's automationDetails.id (bot/report/sarif.py)

    def publish(self, result: ReviewResult) -> None:
        if self.on_terminal():
            self.show(result)
        else:
            write_output(self.text(result), self.output)

    def on_terminal(self) -> bool:
        """The report goes to a person's terminal: rendered there, Markdown anywhere else (a pipe,
        a file, a CI log), and whenever a `--format` was asked for."""
        return self.fmt is None and self.output is None and sys.stdout.isatty()

    def show(self, result: ReviewResult) -> None:
        # Imported here: rich is loaded only for a terminal, never on the review path.
        from bot.cli.terminal.diff import coloured
        from bot.cli.terminal.report import report_blocks, show
        from bot.cli.terminal.text import open_console

        console = open_console()
        if self.diff:
            show(console, [coloured(diff_plain(result.report))], spaced=False)
            return
        explanations = result.explanations if self.explain else ()
        show(console, report_blocks(result.report, self.sections, explanations))

    def text(self, result: ReviewResult) -> str:
        return report_text(
            result.report,
            self.fmt,
            self.sections,
            result.context.head.text,
            result.explanations if self.explain else (),
            self.diff,
            self.sarif_category,
        )


def write_output(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text)
        except OSError as exc:
            raise UsageError(f"--output {output}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
