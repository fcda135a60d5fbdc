"""`--format github`: the report as GitHub Actions workflow commands (`::error file=…,line=…::…`),
which the runner turns into annotations on the PR's files and in the job's summary."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.model.chart_files import chart_file
from bot.model.config import CONFIG_PATH
from bot.model.report import Finding, Report, Severity

# The workflow command for each severity (`::notice` is GitHub's name for the lowest level).
COMMAND = {Severity.FAILURE: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}

# The runner reads a command up to the end of its line and splits its properties on `,` and `=`
# after `::`: these must be escaped, as @actions/core's escapeData / escapeProperty do.
_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


@dataclass(frozen=True)
class Location:
    path: str
    line: int | None


def finding_location(f: Finding) -> Location:
    """Where GitHub shows a finding. A finding that names no file is about its chart as a whole,
    so it sits on the chart's Chart.yaml (code scanning refuses a result with no location); one
    that names no chart either is about the repository's setup, so on the bot's config file."""
    line = f.line if f.line and f.line > 0 else None
    if f.path:
        return Location(f.path, line)
    return Location(chart_file(f.chart) if f.chart else CONFIG_PATH, None)


def escape_data(text: str) -> str:
    for raw, escaped in _DATA_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def escape_property(text: str) -> str:
    for raw, escaped in _PROPERTY_ESCAPES:
        text = text.replace(raw, escaped)
    return text


def where(f: Finding) -> str:
    """Chart, profile and subject, for the formats whose message is plain text."""
    parts = (
        f"chart {f.chart}" if f.chart else "",
        f"profile {f.profile}" if f.profile else "",
        f.subject or "",
    )
    return ", ".join(p for p in parts if p)


def workflow_command(f: Finding) -> str:
    loc = finding_location(f)
    props = [f"file={escape_property(loc.path)}"]
    if loc.line is not None:
        props.append(f"line={loc.line}")
    props.append(f"title={escape_property(f'chart-review/{f.check}: {f.title}')}")
    context = where(f)
    message = f"{f.message}\n\n({context})" if context else f.message
    return f"::{COMMAND[f.severity]} {','.join(props)}::{escape_data(message or f.title)}"


def workflow_commands(findings: Iterable[Finding]) -> str:
    # The report lists the worst first, and GitHub shows only the first few annotations of each
    # level per step: the ones that block the PR are the ones kept.
    return "".join(workflow_command(f) + "\n" for f in findings)


def github_text(report: Report) -> str:
    return workflow_commands(report.findings)
