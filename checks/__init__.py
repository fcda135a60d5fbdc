"""The registry of checks. Adding a check is adding a module and a line to CHECKS.

A check is `run(ctx) -> list[Finding]`. Per-chart checks run once per chart under review with
`ctx.chart` set; repository checks run once with `ctx.chart` None (and even when no chart changed).
A check may also give per-chart data for the JSON report (`chart_data`, stored under the check's
name in `charts[]`), its own markdown section (`section`), and lines for `--explain` (`explain`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.context import Context
from bot.report import Finding

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


CHECKS: tuple[Check, ...] = ()


def by_name(name: str) -> Check | None:
    return next((c for c in CHECKS if c.name == name), None)
