"""`chart-review demo` on a terminal: each scenario under a rule, each PR's report compact (its
verdict, a line per finding, a line per chart's diff), so that a scenario fits a screenful."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.rule import Rule

from bot.cli.terminal.report import report_blocks, show
from bot.cli.terminal.text import DIM, open_console, plain, prose
from bot.engine.review import ReviewResult
from bot.report.markdown import Section


class DemoPR(Protocol):
    """What the terminal shows of a demo PR (bot/cli/demo.py's, which imports this module)."""

    @property
    def number(self) -> int: ...
    @property
    def branch(self) -> str: ...
    @property
    def title(self) -> str: ...


SCENARIO = "Scenario: {name}"
PR_LINE = "PR #{number} ({branch}): {title}"
WHOLE = (
    "Whole reports, with each rendered diff: `chart-review demo --format markdown`; or "
    "`chart-review demo --keep DIR`, then `chart-review review --repo DIR/SCENARIO --base develop "
    "--head BRANCH` on a terminal."
)


class TerminalOutput:
    """The demo's `DemoOutput` for a terminal. No blank line between PRs (their bold lines part
    them), so that the largest scenario, five PRs, fits a screenful."""

    def __init__(self, sections: Sequence[Section]) -> None:
        self.sections = sections
        self.console = open_console()

    def scenario(self, name: str) -> None:
        self.console.print(Rule(plain(SCENARIO.format(name=name)), style=DIM))

    def pr(self, pr: DemoPR, result: ReviewResult) -> None:
        line = PR_LINE.format(number=pr.number, branch=pr.branch, title=pr.title)
        self.console.print(plain(line, "bold"))
        show(self.console, report_blocks(result.report, self.sections, compact=True), spaced=False)

    def end(self) -> None:
        self.console.print()
        self.console.print(prose(WHOLE, DIM))
