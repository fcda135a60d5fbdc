"""The registry of checks. Adding a check is adding a module and a line to REGISTRY.

A check is `run(ctx) -> list[Finding]` (bot/model/check.py). Per-chart checks run once per chart
under review with a `ChartContext`; repository checks run once with the `Context` (even when no
chart changed). The edge (CLI, worker, demo) hands REGISTRY to the engine, which never imports
this package.

Checks run after every render is parsed, not beside the renders: on the benchmark the render
processes and the parse already keep every core busy, and the QoS and selector checks' work, moved
into the render threads, cost ~30% more CPU there and saved no wall time."""

from __future__ import annotations

from bot.model.check import Registry
from checks import lint, render, version
from checks.comments import check as comments
from checks.duplicates import check as duplicates
from checks.headings import check as headings
from checks.kube import check as kube
from checks.probes import check as probes
from checks.qos import check as qos
from checks.selectors import check as selectors
from checks.uid import check as uid
from checks.yaml import check as yaml_lint

REGISTRY = Registry(
    (
        render.CHECK,  # first: a chart that does not render is the first thing a reviewer says
        lint.CHECK,
        yaml_lint.CHECK,  # ct lint's other half, beside helm lint
        qos.CHECK,
        version.CHECK,
        headings.CHECK,
        uid.CHECK,
        probes.CHECK,
        selectors.CHECK,
        kube.CHECK,
        comments.CHECK,
        duplicates.CHECK,
    )
)
