"""Render failures as findings: the PR's doing (failure), or not (notice), or fixed by it (notice)."""

from __future__ import annotations

import re

from bot.charts import ChartResult
from bot.context import RenderError
from bot.report import Finding, RenderErrorEntry, Severity

CHECK = "render"
# Addresses and temp paths differ between two renders of the same broken template.
_VOLATILE_RE = re.compile(r"/tmp/[^\s:)]+|0x[0-9a-f]+")


def _same(a: RenderError, b: RenderError) -> bool:
    return _VOLATILE_RE.sub("", a.message) == _VOLATILE_RE.sub("", b.message)


def _where(err: RenderError) -> str:
    if err.template and err.line:
        return f"{err.template} line {err.line}"
    return err.template or "the chart"


def render_findings(chart: ChartResult) -> list[Finding]:
    r = chart.renders
    out: list[Finding] = []
    for side in ("head",):
        if side in chart.refused and chart.refused.get("base") != chart.refused[side]:
            out.append(
                _finding(
                    r.path,
                    None,
                    Severity.FAILURE,
                    "unsafe-tree",
                    f"{r.path}: chart tree refused at head",
                    chart.refused[side] + ". The chart was not rendered.",
                    None,
                )
            )
        elif side in chart.refused:
            out.append(
                _finding(
                    r.path,
                    None,
                    Severity.NOTICE,
                    "unsafe-tree",
                    f"{r.path}: chart tree refused at base and head",
                    chart.refused[side] + " (already so at base, not this PR's doing).",
                    None,
                )
            )
    if "head" in chart.refused:
        return out
    for profile in sorted(set(r.base) | set(r.head)):
        base = r.base[profile].error if profile in r.base else None
        head = r.head[profile].error if profile in r.head else None
        if head is not None and base is None:
            why = "where the base rendered" if profile in r.base else "(a profile this PR adds)"
            out.append(
                _finding(
                    r.path,
                    profile,
                    Severity.FAILURE,
                    "head-fails",
                    f"{r.path} fails to render on profile {profile}",
                    f"profile {profile}: the head fails to render {why}: {_where(head)}: {head.message}",
                    head,
                )
            )
        elif head is not None and base is not None:
            if _same(base, head):
                out.append(
                    _finding(
                        r.path,
                        profile,
                        Severity.NOTICE,
                        "fails-both",
                        f"{r.path} fails to render on profile {profile}, at base too",
                        f"profile {profile}: fails at base and head alike, so not this PR's doing: {_where(head)}: {head.message}",
                        head,
                    )
                )
            else:
                out.append(
                    _finding(
                        r.path,
                        profile,
                        Severity.WARNING,
                        "fails-differently",
                        f"{r.path} still fails to render on profile {profile}, differently",
                        f"profile {profile}: the base failed with `{base.message}`; the head fails with {_where(head)}: {head.message}",
                        head,
                    )
                )
        elif base is not None and profile in r.head:
            out.append(
                _finding(
                    r.path,
                    profile,
                    Severity.NOTICE,
                    "fixed",
                    f"{r.path} renders again on profile {profile}",
                    f"profile {profile}: the base failed to render ({_where(base)}: {base.message}); the head fixes it.",
                    None,
                )
            )
    return out


def _finding(
    chart: str,
    profile: str | None,
    severity: Severity,
    rule: str,
    title: str,
    message: str,
    err: RenderError | None,
) -> Finding:
    return Finding(
        check=CHECK,
        severity=severity,
        rule=rule,
        chart=chart,
        profile=profile,
        subject=profile,
        title=title,
        message=message,
        path=err.template if err is not None else None,
        line=err.line if err is not None else None,
    )


def render_error_entries(chart: ChartResult) -> tuple[RenderErrorEntry, ...]:
    out = []
    for side in ("base", "head"):
        for profile, rendered in sorted(chart.renders.side(side).items()):
            if rendered.error is not None:
                e = rendered.error
                out.append(RenderErrorEntry(side, profile, e.template, e.line, e.message))
    return tuple(out)
