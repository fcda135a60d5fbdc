"""The terminal rendering's blocks, printed to a string (no terminal needed for what they say):
findings already at base folded under the PR's, a chart not reviewed in the verdict, the demo's
compact lines. What a terminal receives is tested through a pty in test_terminal.py."""

from __future__ import annotations

import io

from rich.console import Console

from bot.cli.terminal.report import report_blocks, show
from bot.model.report import ChartSummary, Finding, Report, Severity
from bot.report.markdown import Section

SECTIONS = [Section("probes", "Probes"), Section("uid", "Assigned UIDs")]
CHART = ChartSummary("charts/web", "web", "1.0.0", "1.1.0", ("aks", "eks"))


def printed(report: Report, compact: bool = False, explanations: tuple[str, ...] = ()) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None, markup=False, emoji=False)
    show(console, report_blocks(report, SECTIONS, explanations, compact), spaced=not compact)
    return out.getvalue()


def finding(title: str, severity: Severity, preexisting: bool = False) -> Finding:
    return Finding(
        "probes",
        severity,
        title,
        f"{title}: the probe checks `8080`.",
        chart="charts/web",
        profile="aks",
        path="charts/web/templates/web.yaml",
        line=7,
        preexisting=preexisting,
    )


def report(*findings: Finding, charts: tuple[ChartSummary, ...] = (CHART,)) -> Report:
    return Report("a" * 40, "b" * 40, "c" * 40, charts, findings, ("probes", "uid"))


def test_findings_at_base_are_folded_under_the_prs_own() -> None:
    text = printed(
        report(
            finding("port moved", Severity.WARNING),
            finding("old port", Severity.NOTICE, preexisting=True),
            finding("older port", Severity.NOTICE, preexisting=True),
        )
    )
    assert text.splitlines()[:2] == [
        "✅ chart-review: 1 warning; 2 already at base",
        "charts/web 1.0.0 → 1.1.0 (aks, eks) · compared aaaaaaaaaaaa → bbbbbbbbbbbb",
    ]
    probes = text.partition("Probes: 1 warning; 2 already at base\n")[2].split("\n\n")[0]
    assert [line.rstrip() for line in probes.splitlines()] == [
        "⚠️ port moved",
        "   charts/web/templates/web.yaml:7 · charts/web · aks",
        "   port moved: the probe checks 8080.",
        "   2 already at base, unchanged",
        "   • old port · charts/web/templates/web.yaml:7 · charts/web · aks",
        "   • older port · charts/web/templates/web.yaml:7 · charts/web · aks",
    ]
    assert "No findings: Assigned UIDs." in text


def test_the_demo_s_lines_are_one_a_finding_and_the_fold_one_line() -> None:
    text = printed(
        report(
            finding("port moved", Severity.FAILURE),
            finding("old port", Severity.NOTICE, preexisting=True),
        ),
        compact=True,
    )
    assert [line.rstrip() for line in text.splitlines()] == [
        "❌ chart-review: 1 failure; 1 already at base · charts/web 1.0.0 → 1.1.0 (aks, eks)",
        "Probes: 1 failure; 1 already at base",
        "❌ port moved · charts/web/templates/web.yaml:7",
        "   1 already at base, unchanged",
    ]


def test_a_chart_not_reviewed_is_in_the_verdict_and_explanations_close_the_report() -> None:
    lib = ChartSummary("charts/lib", "lib", "1.0.0", "1.0.0", (), not_reviewed="a library chart")
    text = printed(report(charts=(CHART, lib)), explanations=("uid: not checked",))
    first, second = text.splitlines()[:2]
    assert first == "⚠️ chart-review: no findings; not reviewed: charts/lib"
    assert second.startswith("charts/web 1.0.0 → 1.1.0 (aks, eks); charts/lib 1.0.0 (no profile)")
    assert text.endswith("Considered and left alone\n• uid: not checked\n")
