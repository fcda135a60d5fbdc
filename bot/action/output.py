"""What the action leaves in the job besides GitHub's API: the JSON report and the whole rendered
diff beside it, the report in the `format` input's format (SARIF for code scanning), the step's
outputs, the job summary, and workflow annotations where the token could not post check runs; and
the `values`/`set` inputs, read before anything is published."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from bot.action.env import ActionEnv, ActionSetupError
from bot.charts.helm_set import parse_set, read_values_file
from bot.charts.profiles import ValuesOverride
from bot.engine.review import ReviewResult
from bot.errors import UsageError
from bot.model.report import Report, Severity, counts
from bot.report.annotations import escape_data, workflow_commands
from bot.report.bodies import fit
from bot.report.diff_section import diff_plain
from bot.report.markdown import Section, to_markdown
from bot.report.sarif import category
from bot.report.text import report_text

REPORT_NAME = "chart-review-report.json"
# The whole rendered diff, as `chart-review review --diff` prints it, beside the report: a comment
# or a check run holds at most 65,536 characters of it, a workflow can upload this as an artifact.
DIFF_SUFFIX = ".diff"
# GitHub takes up to 1 MiB of job summary per step; in characters, room for 4-byte UTF-8.
STEP_SUMMARY_CHARS = 1024 * 1024 // 4
# The `format` input's report, by default in the runner's temporary directory: `chart-review.sarif`
# is what github/codeql-action/upload-sarif is pointed at.
FORMATTED_NAME = "chart-review"
FORMAT_SUFFIX = {"sarif": ".sarif", "json": ".json", "markdown": ".md", "github": ".txt"}


@dataclass(frozen=True)
class Outputs:
    failures: int
    warnings: int
    report: Path
    diff: Path
    output_file: Path | None = None  # the `format` input's report

    def lines(self) -> str:
        # `k=v`, one a line: each value is a number or a path, never a newline.
        return (
            f"failures={self.failures}\nwarnings={self.warnings}\n"
            f"report={self.report}\ndiff={self.diff}\n"
            f"output-file={self.output_file or ''}\n"
        )


def report_path(env: ActionEnv, requested: str | None) -> Path:
    """Where the JSON report goes: --report, else the runner's temporary directory (emptied after
    every job), else the working directory."""
    if requested:
        return Path(requested)
    return (env.temp_dir or Path.cwd()) / REPORT_NAME


def diff_path(report_file: Path) -> Path:
    return report_file.with_suffix(DIFF_SUFFIX)


def write_report(report: Report, path: Path) -> Outputs:
    """The JSON report at `path` and the plain rendered diff beside it (empty when the review
    computed none, so the `diff` output always names a file)."""
    _write(path, report.to_json_text(), append=False)
    _write(diff_path(path), diff_plain(report), append=False)
    found = counts(report.findings)
    failures, warnings = found.get(Severity.FAILURE, 0), found.get(Severity.WARNING, 0)
    return Outputs(failures, warnings, path, diff_path(path))


def formatted_path(env: ActionEnv) -> Path | None:
    """Where the `format` input's report goes: `output-file` (relative to the workspace), else
    chart-review.<suffix> in the runner's temporary directory; None without a format."""
    fmt, given = env.inputs.format, env.inputs.output_file
    if not fmt:
        return None
    if given:
        return env.workspace / given  # an absolute path stays as it is
    return (env.temp_dir or Path.cwd()) / (FORMATTED_NAME + FORMAT_SUFFIX[fmt])


def write_formatted(
    env: ActionEnv, result: ReviewResult, outputs: Outputs, sections: Sequence[Section]
) -> Outputs:
    """The report in the `format` input's format, as `review --format` writes it."""
    path = formatted_path(env)
    if path is None:
        return outputs
    scope = category(env.inputs.charts, env.inputs.profiles)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # `output-file: results/chart-review.sarif`
    except OSError as exc:
        raise ActionSetupError(
            f"{path.parent}: cannot make the directory ({exc.strerror})"
        ) from None
    text = report_text(
        result.report, env.inputs.format, sections, result.context.head.text, sarif_category=scope
    )
    _write(path, text, append=False)
    return replace(outputs, output_file=path)


def action_values(env: ActionEnv) -> ValuesOverride:
    """The `values`, `set` and `set-string` inputs, as `review --values/--set/--set-string` take
    them; the files relative to the workspace."""
    inputs = env.inputs
    try:
        files = tuple(read_values_file(str(env.workspace / f)) for f in inputs.values)
    except UsageError as exc:
        raise ActionSetupError(f"input values: {exc}") from None
    try:
        sets = [a for s in inputs.sets for a in parse_set(s)]
        sets += [a for s in inputs.set_strings for a in parse_set(s, as_string=True)]
    except UsageError as exc:
        raise ActionSetupError(f"input set: {exc}") from None
    return ValuesOverride(files=files, sets=tuple(sets))


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


def print_notice(level: str, message: str, out: TextIO = sys.stdout) -> None:
    """One line the runner shows as an annotation of the step, `notice` or `warning`: what the
    action could not do and what the workflow can add."""
    out.write(f"::{level}::{escape_data(message)}\n")
    out.flush()


def _write(path: Path, text: str, append: bool) -> None:
    try:
        with path.open("a" if append else "w") as f:
            f.write(text)
    except OSError as exc:
        raise ActionSetupError(f"{path}: cannot write ({exc.strerror})") from None
