"""The QoS section of the markdown report: per chart, a table of the pods whose class changed, a
count of those that did not, and the check's other findings below it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.model.markdown_safe import cell, inline
from bot.model.report import CRASHED, Finding, icon
from checks.qos.fix import fix_sentence

TABLE_HEAD = "| profile | workload | base | head | why |\n| --- | --- | --- | --- | --- |"
NO_CHANGES = "No pod changed QoS class."
UNCHANGED = "Unchanged: {counts}."
NOTHING = "No pods."
NOT_REVIEWED_LINE = "Not reviewed: {why}."
ABSENT = "—"
TABLE_RULES = frozenset({"downgrade", "upgrade", "new-besteffort", "added", "removed", "renamed"})


def section(findings: Sequence[Finding], data_by_chart: Mapping[str, Mapping[str, Any]]) -> str:
    charts = sorted({f.chart for f in findings if f.chart} | set(data_by_chart))
    parts = [_chart(path, findings, data_by_chart.get(path, {})) for path in charts]
    return "\n\n".join(parts) if parts else NOTHING


def _chart(path: str, findings: Sequence[Finding], data: Mapping[str, Any]) -> str:
    mine = [f for f in findings if f.chart == path]
    rows = [f for f in mine if f.rule in TABLE_RULES and f.subject]
    others = [f for f in mine if f not in rows]
    lines = [f"**{inline(path)}**", ""]
    if rows:
        lines += [TABLE_HEAD, *(_row(f) for f in rows)]
    elif data.get("not_reviewed"):  # nothing rendered to compare: say so, not "no change"
        lines.append(NOT_REVIEWED_LINE.format(why=inline(str(data["not_reviewed"]))))
    elif not any(f.rule == CRASHED for f in mine):  # a check that did not finish says nothing
        lines.append(NO_CHANGES)
    unchanged = _unchanged(data)
    if unchanged:
        lines += ["", UNCHANGED.format(counts=inline(unchanged))]
    if others:  # a bullet is one line of ours: a name's line break must not end it
        lines += ["", *(f"- {icon(f.severity)} {inline(f.message)}" for f in others)]
    return "\n".join(lines)


def _row(finding: Finding) -> str:
    data = finding.data
    workload = finding.subject or ""
    if data.get("renamed_from"):
        workload = f"{data['renamed_from']} → {workload}"
    causes = data.get("causes") or []
    why = "; ".join(str(c.get("text", "")) for c in causes) or finding.rule
    if data.get("fix"):  # what to write, beside why: the table is where a reviewer reads a change
        why = f"{why}. {fix_sentence(data['fix'], why)}"
    cells = [
        finding.profile or "",
        workload,
        data.get("base") or ABSENT,
        data.get("head") or ABSENT,
        f"{icon(finding.severity)} {why}",
    ]
    return "| " + " | ".join(cell(str(c)) for c in cells) + " |"


def _unchanged(data: Mapping[str, Any]) -> str:
    """`eks 3 pods, default 1 pod`: per profile rendered at both sides, the pods whose key and class
    are the same at base and head."""
    qos = data.get("qos", data)  # the chart's data as chart_data returned it, or its `qos` part
    base, head = qos.get("base", {}), qos.get("head", {})
    counts = []
    for profile in sorted(base.keys() & head.keys()):
        same = sum(1 for key, cls in head[profile].items() if base[profile].get(key) == cls)
        counts.append(f"{profile} {same} pod{'' if same == 1 else 's'}")
    return ", ".join(counts)
