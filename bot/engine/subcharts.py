"""Findings about a subchart's objects say so: which dependency the template belongs to, and,
when the PR moved that dependency's version, that the change came with the bump. A reviewer
reading "the redis container lost its limits" must know the PR did not edit redis's templates:
it bumped redis."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.model.context import ChartRenders
from bot.model.report import Finding


def attribute_subcharts(
    findings: Iterable[Finding], charts: Sequence[ChartRenders]
) -> list[Finding]:
    by_path = {c.path: c for c in charts}
    out = []
    for finding in findings:
        chart = by_path.get(finding.chart or "")
        # The template rendered, wherever the finding now points (its parent's values line).
        template = finding.origin.path if finding.origin is not None else finding.path
        sub = chart.subchart(template) if chart is not None else None
        if sub is None:
            out.append(finding)
            continue
        data = {**finding.data, "subchart": {"name": sub.name, "base": sub.base, "head": sub.head}}
        said = f"subchart {sub.name}" + (f", {sub.bump}" if sub.bump else "")
        out.append(replace(finding, message=f"{finding.message} ({said})", data=data))
    return out
