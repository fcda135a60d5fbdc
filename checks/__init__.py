"""The registry of checks. Adding a check is adding a module and a line to CHECKS.

A check is `run(ctx) -> list[Finding]`. Per-chart checks run once per chart under review with
`ctx.chart` set; repository checks run once with `ctx.chart` None (and even when no chart changed).
A check may also give per-chart data for the JSON report (`chart_data`, stored under the check's
name in `charts[]`), its own markdown section (`section`) and lines for `--explain` (`explain`).

Checks run after every render is parsed, not beside the renders: on the benchmark the render
processes and the parse already keep every core busy, and the QoS and selector checks' work, moved
into the render threads, cost ~30% more CPU there and saved no wall time."""

from __future__ import annotations

from bot.engine.check import Check
from bot.engine.markdown import Section
from checks import uid, version
from checks.headings import check as headings
from checks.probes import check as probes
from checks.qos import check as qos
from checks.selectors import check as selectors

CHECKS: tuple[Check, ...] = (
    qos.CHECK,
    version.CHECK,
    headings.CHECK,
    uid.CHECK,
    probes.CHECK,
    selectors.CHECK,
)


def by_name(name: str) -> Check | None:
    return next((c for c in CHECKS if c.name == name), None)


def sections() -> list[Section]:
    """The markdown section of every registered check, in registry order."""
    return [Section(c.name, c.title, c.section) for c in CHECKS]
