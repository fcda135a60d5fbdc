"""What a review exits with: the one rule the command line's `review` and the Action share. 0 no
failure, 1 a finding as severe as `fail-on` asks, 2 the tool could not run (bad arguments or input,
said in one line), 3 an internal error (a bug: the traceback is logged)."""

from __future__ import annotations

from bot.model.report import Report, Severity

EXIT_OK, EXIT_FAILURE, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
# `--fail-on` / the Action's `fail-on`: the severities that make a review exit 1. Notices never do.
FAIL_ON = {
    "failure": frozenset({Severity.FAILURE}),
    "warning": frozenset({Severity.FAILURE, Severity.WARNING}),
    "never": frozenset(),
}


def exit_status(report: Report, fail_on: str = "failure") -> int:
    """1 when a finding is as severe as `fail_on` asks, else 0."""
    failing = FAIL_ON[fail_on]
    return EXIT_FAILURE if any(f.severity in failing for f in report.findings) else EXIT_OK
