"""The `qos` check: the Kubernetes QoS class of every pod at base and head, per chart and profile, as
the kubelet computes it (init and sidecar containers, pod-level resources, limits-only
defaulting), and which container and resource caused a change. A downgrade is a failure; so is a
container without requests on a dimension a rendered ResourceQuota constrains. A downgrade's
`data.fix` in the JSON report is the resources block that restores the class, per container, with
its rule.

Quiet and right: a class that did not change says nothing; a defect present at base and head alike
is a notice, never a failure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.model.check import Check
from bot.model.context import ChartContext, ChartRenders, Rendered
from bot.model.report import Finding
from checks.qos.classes import Cause, PodQoS, QoSClass, pod_qos
from checks.qos.compare import PodView, changes, classify, pods
from checks.qos.findings import bad_quantity_finding, change_finding, profile_finding, quota_finding
from checks.qos.quota import QuotaGap, quota_gaps
from checks.qos.section import section
from checks.qos.suggest import suggest, values_fix

__all__ = [
    "CHECK",
    "Cause",
    "PodQoS",
    "QoSClass",
    "chart_data",
    "classify",
    "explain",
    "pod_qos",
    "run",
]

Pods = Mapping[str, PodView]
EXPLAIN = "qos: {chart} profile {profile}: {pods} pods at head, {same} with the same class at base"
EXPLAIN_SKIPPED = "qos: {chart} profile {profile}: not compared, a side did not render"


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    findings: list[Finding] = []
    for profile in sorted(chart.base.keys() | chart.head.keys()):
        findings += _profile(ctx, chart, profile)
    return findings


def chart_data(ctx: ChartContext) -> Mapping[str, Any]:
    """Every pod's class per side and profile, for `charts[].qos` of the JSON report."""
    chart = ctx.chart
    return {
        "qos": {
            side: {
                profile: classify(rendered.documents)
                for profile, rendered in sorted(chart.side(side).items())
                if rendered.error is None
            }
            for side in ("base", "head")
        }
    }


def _profile(ctx: ChartContext, chart: ChartRenders, profile: str) -> list[Finding]:
    base_render, head_render = chart.base.get(profile), chart.head.get(profile)
    base, head = _pods(base_render), _pods(head_render)
    findings: list[Finding] = []
    if head is not None and head_render is not None:
        findings += _bad_quantities(ctx, chart.path, profile, base, head)
        findings += _quota(ctx, chart.path, profile, (base_render, base), (head_render, head))
    if base_render is None and head:
        findings.append(profile_finding(profile, chart.path, head, added=True))
    elif head_render is None and base:
        findings.append(profile_finding(profile, chart.path, base, added=False))
    elif base is not None and head is not None:
        findings += [
            suggest(ctx, change_finding(change, profile, chart.path, ctx.head, ctx.base))
            for change in changes(base, head)
        ]
    return findings


def _pods(rendered: Rendered | None) -> Pods | None:
    """The pods of a render; None when that side has no render (the engine reports its errors)."""
    if rendered is None or rendered.error is not None:
        return None
    return pods(rendered.documents)


def _bad_quantities(
    ctx: ChartContext, chart: str, profile: str, base: Pods | None, head: Pods
) -> list[Finding]:
    known = {
        (key, bad.container, bad.field, bad.value)
        for key, view in (base or {}).items()
        for bad in view.bad_quantities
    }
    return [
        bad_quantity_finding(
            bad, view, profile, chart, ctx.head, (key, bad.container, bad.field, bad.value) in known
        )
        for key, view in sorted(head.items())
        for bad in view.bad_quantities
    ]


def _quota(
    ctx: ChartContext,
    chart: str,
    profile: str,
    base: tuple[Rendered | None, Pods | None],
    head: tuple[Rendered | None, Pods],
) -> list[Finding]:
    head_render, head_pods = head
    assert head_render is not None
    base_render, base_pods = base
    known: set[tuple[str, str | None, str]] = set()
    if base_render is not None and base_pods is not None:
        known = {gap.identity for gap in quota_gaps(base_render.documents, base_pods)}
    findings = []
    for (pod, container), gaps in _by_container(quota_gaps(head_render.documents, head_pods)):
        fields = {g.field for g in gaps if (pod, container, g.field) in known}
        findings.append(quota_finding(gaps, head_pods[pod], profile, chart, ctx.head, fields))
    return findings


def _by_container(
    gaps: list[QuotaGap],
) -> list[tuple[tuple[str, str | None], list[QuotaGap]]]:
    grouped: dict[tuple[str, str | None], list[QuotaGap]] = {}
    for gap in gaps:
        grouped.setdefault((gap.pod, gap.container), []).append(gap)
    return sorted(grouped.items(), key=lambda item: (item[0][0], item[0][1] or ""))


def explain(ctx: ChartContext) -> list[str]:
    """For `--explain`: per profile, how many pods were compared and how many kept their class."""
    chart = ctx.chart
    lines = []
    for profile in sorted(chart.base.keys() & chart.head.keys()):
        base, head = _pods(chart.base[profile]), _pods(chart.head[profile])
        if base is None or head is None:
            lines.append(EXPLAIN_SKIPPED.format(chart=chart.path, profile=profile))
            continue
        same = sum(1 for k, v in head.items() if k in base and base[k].qos_class is v.qos_class)
        lines.append(EXPLAIN.format(chart=chart.path, profile=profile, pods=len(head), same=same))
    return lines


CHECK = Check(
    "qos",
    "QoS classes",
    run,
    "chart",
    chart_data,
    section,
    explain,
    values_fix=values_fix,
    chart_data_empty={"qos": {"base": {}, "head": {}}},
)
