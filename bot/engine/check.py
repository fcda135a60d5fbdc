"""What a check is: a name, a title, a run function over a Context, and optional extras for the report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.engine.context import Context
from bot.engine.report import Finding

RunFn = Callable[[Context], list[Finding]]
ChartDataFn = Callable[[Context], Mapping[str, Any]]
# (findings of this check, chart path -> that chart's data) -> markdown body of the check's section
SectionFn = Callable[[Sequence[Finding], Mapping[str, Mapping[str, Any]]], str]
# Lines for `chart-review review --explain`: what the check considered and why it did not report it.
ExplainFn = Callable[[Context], list[str]]


@dataclass(frozen=True)
class Check:
    name: str
    title: str
    run: RunFn
    scope: Literal["chart", "repo"] = "chart"
    chart_data: ChartDataFn | None = None
    section: SectionFn | None = None
    explain: ExplainFn | None = None
