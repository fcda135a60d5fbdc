"""Running the checks: each one contained, so that one check's error costs its own findings and
nothing else, and the config's severities applied after."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from bot.model.check import Check
from bot.model.config import Config
from bot.model.context import ChartContext, Context
from bot.model.report import CRASHED, Finding, Severity

log = logging.getLogger(__name__)


def run_check(
    check: Check[Any],
    ctx: Context,
    chart_data: dict[str, dict[str, Any]],
    explanations: list[str] | None,
) -> list[Finding]:
    """A repository check once, a chart check on every chart of `ctx`, its chart data and
    explanations gathered as it goes."""
    if check.scope == "repo":
        return _contained(check, None, partial(_run_one, check, ctx, None, explanations))
    found: list[Finding] = []
    for chart in ctx.charts:
        chart_ctx = ctx.for_chart(chart)
        run = partial(_run_one, check, chart_ctx, chart_data[chart.path], explanations)
        found += _contained(check, chart.path, run)
    return found


def _run_one(
    check: Check[Any],
    ctx: Context,
    chart_data: dict[str, Any] | None,
    explanations: list[str] | None,
) -> list[Finding]:
    found = check.run(ctx)
    if chart_data is not None and check.chart_data is not None and isinstance(ctx, ChartContext):
        chart_data.update(check.chart_data(ctx))
    if explanations is not None and check.explain is not None:
        explanations += check.explain(ctx)
    return found


def _contained(
    check: Check[Any], chart: str | None, run: Callable[[], list[Finding]]
) -> list[Finding]:
    """A check that fails with an error (a bug, or a crafted chart that drives it past a limit)
    costs its own findings for that chart, said as a warning, and nothing else: the other checks
    and charts are still reviewed, and its check run is not a pass."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - any error of one check must not end the review
        log.exception("check %s failed on %s", check.name, chart or "the repository")
        return [crash_finding(check.name, chart, exc)]


def crash_finding(check: str, chart: str | None, exc: Exception) -> Finding:
    where = f" on chart {chart}" if chart else ""
    reason = f"{type(exc).__name__}: {exc}"
    reason = reason if len(reason) <= 300 else reason[:297] + "..."
    return Finding(
        check=check,
        severity=Severity.WARNING,
        rule=CRASHED,
        chart=chart,
        title=f"the {check} check could not finish{where}",
        message=f"The {check} check stopped{where} with {reason}, so what it would have found there "
        "is missing; the other checks ran. If the chart is valid, this is a bug in chart-review: "
        "please report it with this message.",
    )


def apply_overrides(findings: Sequence[Finding], config: Config) -> list[Finding]:
    """Config may set one severity for a check, or one per rule (`checks.qos.severity.downgrade`)."""
    out = []
    for f in findings:
        if f.preexisting:
            # Present at base and head alike: not the PR's doing, so a notice whatever the config.
            out.append(f)
            continue
        override = config.check(f.check).severity
        if isinstance(override, str):
            f = f.with_severity(Severity(override))
        elif isinstance(override, dict) and f.rule in override:
            f = f.with_severity(Severity(override[f.rule]))
        out.append(f)
    return out
