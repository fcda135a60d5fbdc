"""What a check is, and the registry of them that the edge hands the engine.

A check is a name, a title and a pure run function: per chart over a `ChartContext` (its chart is
always set), or once per review over the repository's `Context`. Optional extras: per-chart data
for the JSON report, its own markdown section, and lines for `--explain`. The engine never imports
`checks/`: `checks.REGISTRY` is passed in, as chart-testing's engine is handed its adapters."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

from bot.model.config import CheckConfig, CheckOptions
from bot.model.context import ChartContext, Context
from bot.model.report import Finding, Report

C = TypeVar("C", bound=Context)

# (findings of this check, chart path -> that chart's data) -> markdown body of the check's section
SectionFn = Callable[[Sequence[Finding], Mapping[str, Mapping[str, Any]]], str]


@dataclass(frozen=True)
class Section:
    """A check's part of the report's markdown: its body made from its findings and chart data."""

    name: str
    title: str
    body: SectionFn | None = None
    quiet: bool = False  # shown only when its check found something
    config_key: str = ""  # where the config file sets its options; "" for `checks.<name>`

    @property
    def options_key(self) -> str:
        return self.config_key or f"checks.{self.name}"

    def shown(self, report: Report) -> bool:
        return not self.quiet or bool(report.findings_for(self.name))


class Need(StrEnum):
    """Costly work the engine does only for a check that declares it needs it."""

    # Helm's lint of every head profile (`Rendered.lint`): it costs more than the render.
    LINT = "lint"
    # Other open PRs' renders of the charts (`Context.other_renders`), at their heads.
    OTHER_RENDERS = "other-renders"


@dataclass(frozen=True)
class Check(Generic[C]):
    name: str
    title: str
    run: Callable[[C], list[Finding]]
    scope: Literal["chart", "repo"] = "chart"
    chart_data: Callable[[ChartContext], Mapping[str, Any]] | None = None
    section: SectionFn | None = None
    # Lines for `chart-review review --explain`: what it considered and why it did not report it.
    explain: Callable[[C], list[str]] | None = None
    # A check with nothing to say on most reviews (rendering): no section, no check run, no
    # summary line unless it found something, so that it is not noise on every PR.
    quiet: bool = False
    # For a finding the engine moved to the values line that set its field (bot/engine/
    # provenance.py, `finding.origin.values`): the finding proposing the values edit that fixes
    # it, as `Finding.suggestion`, which the engine then proves as any other.
    values_fix: Callable[[ChartContext, Finding], Finding] | None = None
    # What a chart check can read before its chart's renders are in (git alone), given the
    # review's context without charts or open PRs and the chart's path: run beside Helm's renders
    # as the review begins, so that the check's run finds it in its memos. Returns nothing; its
    # errors are the run's to meet and report.
    early: Callable[[Context, str], None] | None = None
    # What the engine must make for this check beyond the PR's own renders.
    needs: frozenset[Need] = frozenset()
    # The model of its options in the config file (enabled and severity at least), and whether
    # they sit at a top-level key named for the check rather than under `checks:`.
    options: type[CheckConfig] = CheckConfig
    options_top_level: bool = False
    # The keys `chart_data` gives, with what a chart has under each when the check gave nothing
    # (it was off, or the chart was not reviewed): the JSON report has them on every chart.
    chart_data_empty: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Registry:
    """The checks a review may run, in the order their sections and check runs appear."""

    checks: tuple[Check[Any], ...]

    def __iter__(self) -> Iterator[Check[Any]]:
        return iter(self.checks)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.checks)

    @property
    def options(self) -> tuple[CheckOptions, ...]:
        """What the config parser knows of each check's options (`parse_config`'s
        `known_checks`)."""
        return tuple(CheckOptions(c.name, c.options, c.options_top_level) for c in self.checks)

    def empty_chart_data(self) -> dict[str, Any]:
        """Every check's chart data as a chart has it before any check gives its own."""
        out: dict[str, Any] = {}
        for check in self.checks:
            out.update(copy.deepcopy(dict(check.chart_data_empty or {})))
        return out

    def by_name(self, name: str) -> Check[Any] | None:
        return next((c for c in self.checks if c.name == name), None)

    def sections(self) -> list[Section]:
        """The markdown section of every registered check, in registry order."""
        keys = {o.name: o.key for o in self.options}
        return [Section(c.name, c.title, c.section, c.quiet, keys[c.name]) for c in self.checks]
