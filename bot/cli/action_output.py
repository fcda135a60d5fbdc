"""What the action leaves in the job besides GitHub's API: the JSON report, the step's outputs, the
job summary, and workflow annotations where the token could not post check runs."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from bot.app.publish import fit
from bot.cli.action_env import ActionEnv, ActionSetupError
from bot.cli.annotations import workflow_commands
from bot.engine.markdown import Section, to_markdown
from bot.engine.report import Report, Severity, counts

REPORT_NAME = "chart-review-report.json"
# GitHub takes up to 1 MiB of job summary per step; in characters, room for 4-byte UTF-8.
STEP_SUMMARY_CHARS = 1024 * 1024 // 4


@dataclass(frozen=True)
class Outputs:
    failures: int
    warnings: int
    report: Path

    def lines(self) -> str:
        # `k=v`, one a line: each value is a number or a path, never a newline.
        return f"failures={self.failures}\nwarnings={self.warnings}\nreport={self.report}\n"


def report_path(env: ActionEnv, requested: str | None) -> Path:
    """Where the JSON report goes: --report, else the runner's temporary directory (emptied after
    every job), else the working directory."""
    if requested:
        return Path(requested)
    return (env.temp_dir or Path.cwd()) / REPORT_NAME


def write_report(report: Report, path: Path) -> Outputs:
    _write(path, report.to_json_text(), append=False)
    found = counts(report.findings)
    return Outputs(found.get(Severity.FAILURE, 0), found.get(Severity.WARNING, 0), path)


def write_outputs(env: ActionEnv, outputs: Outputs) -> None:
    if env.output is not None:
        _write(env.output, outputs.lines(), append=True)


def write_step_summary(env: ActionEnv, report: Report, sections: Sequence[Section]) -> None:
    """The whole markdown report as the job summary, on the run's page: the one place a reader
    finds everything when the token could post nothing. Appended: other steps write there too."""
    if env.step_summary is not None:
        text = fit(to_markdown(report, sections), STEP_SUMMARY_CHARS)
        _write(env.step_summary, text.rstrip("\n") + "\n", append=True)


def print_annotations(report: Report, out: TextIO = sys.stdout) -> None:
    """Workflow commands on stdout, which the runner turns into annotations on the PR's files:
    what the check runs would have carried."""
    out.write(workflow_commands(report.findings))
    out.flush()


def _write(path: Path, text: str, append: bool) -> None:
    try:
        with path.open("a" if append else "w") as f:
            f.write(text)
    except OSError as exc:
        raise ActionSetupError(f"{path}: cannot write ({exc.strerror})") from None
