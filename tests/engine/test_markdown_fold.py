"""The markdown report folds what was already wrong at base, and gives a check with nothing to say
no section: the PR's own findings stay in view."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot.model.report import ChartSummary, Finding, Report, Severity
from bot.report.markdown import Section, fold_headline, to_markdown

SECTIONS = [
    Section("render", "Rendering", quiet=True),
    Section("probes", "Probes"),
    Section("version", "Chart versions"),
    Section("uid", "Assigned UIDs"),
]
DETAILS_RE = re.compile(r"<details><summary>(.*?)</summary>\n\n(.*?)\n\n</details>", re.S)


def old(n: int) -> Finding:
    """A notice as checks/kit/delta.py words one already at base: long, and one per workload."""
    subject = f"Deployment/default/release-worker-{n}"
    return Finding(
        "probes",
        Severity.NOTICE,
        f"{subject}: container worker probes port 9{n:03d}, which no containerPort declares on "
        "aks, eks (already at base)",
        f"profiles aks, eks: {subject}: the readiness probe of container worker checks port "
        f"9{n:03d}, which no containerPort of the container declares; Kubernetes does not require "
        "one, the list is informational. Already so at base, so not this PR's doing.",
        rule="undeclared-port",
        chart="client",
        profile="aks, eks",
        subject=subject,
        path="client/templates/worker.yaml",
        line=30 + n,
        preexisting=True,
    )


NEW = Finding(
    "probes",
    Severity.FAILURE,
    "Deployment/default/release-api: probe port web is no containerPort",
    "profile eks: the liveness probe names port web; no containerPort carries it.",
    rule="missing-port",
    chart="client",
    profile="eks",
    path="client/templates/api.yaml",
    line=12,
    preexisting=False,
)


def report(*findings: Finding, checks_run: Sequence[str] = ("probes", "version", "uid")) -> Report:
    chart = ChartSummary("client", "client", "1.0.0", "1.0.1", ("aks", "eks"))
    return Report("b" * 40, "a" * 40, "c" * 40, (chart,), findings, tuple(checks_run))


def unfolded(rep: Report) -> Report:
    """The same report as if nothing were known to be at base: what the markdown printed before."""
    return replace(rep, findings=tuple(replace(f, preexisting=False) for f in rep.findings))


def test_findings_already_at_base_fold_into_one_line_and_a_collapsed_block() -> None:
    rep = report(NEW, *(old(n) for n in range(20)))
    text, before = to_markdown(rep, SECTIONS), to_markdown(unfolded(rep), SECTIONS)
    [(summary, rows)] = DETAILS_RE.findall(text)
    assert summary == "20 already at base, unchanged"
    assert rows.count("\n| client | aks, eks | ") == 20  # every one, inside the block
    assert all(old(n).title in rows for n in range(20))
    outside = DETAILS_RE.sub("", text)
    assert NEW.message in outside and "already at base)" not in outside
    # What is in view when the block is closed is the PR's finding: a fraction of what it was.
    assert len(outside) < len(before) / 5
    assert len(text) < len(before) * 0.6  # and the folded rows are short: titles, not messages
    assert "### Probes: 1 failure; 20 already at base\n\n| |" in text


def test_a_blank_line_follows_the_summary_so_github_renders_the_rows() -> None:
    text = to_markdown(report(old(1)), SECTIONS)
    block = text[text.index("<details>") :]
    assert block.startswith(
        "<details><summary>1 already at base, unchanged</summary>\n\n| chart | profile |"
    )
    assert block.rstrip("\n").endswith(
        "|\n\n</details>\n\nNo findings: Chart versions, Assigned UIDs."
    )


def test_only_findings_at_base_say_no_new_findings() -> None:
    findings = [old(1), old(2)]
    assert fold_headline(findings) == "no new findings; 2 already at base"
    assert fold_headline([NEW]) == "1 failure"  # nothing at base: the headline as it always was
    assert fold_headline([]) == "no findings"
    text = to_markdown(report(*findings), SECTIONS)
    assert text.startswith("## ✅ chart-review: no new findings; 2 already at base\n")
    assert "### Probes: no new findings; 2 already at base\n\n<details>" in text


def test_a_check_with_nothing_to_say_gets_no_section_but_one_line_names_it() -> None:
    text = to_markdown(report(NEW), SECTIONS)
    assert re.findall("^### .*$", text, re.M) == ["### Probes: 1 failure"]
    assert text.endswith("\n\nNo findings: Chart versions, Assigned UIDs.\n")
    assert "Rendering" not in text  # quiet, and found nothing
    nothing = to_markdown(report(), SECTIONS)
    assert nothing.endswith("\n\nNo findings: Probes, Chart versions, Assigned UIDs.\n")


def test_a_check_the_review_did_not_run_is_not_said_to_have_found_nothing() -> None:
    text = to_markdown(report(NEW, checks_run=("probes", "version")), SECTIONS)
    assert text.endswith("\n\nNo findings: Chart versions.\n")


def _pods_body(findings: Sequence[Finding], data: Mapping[str, Mapping[str, Any]]) -> str:
    return f"{len(findings)} changes; unchanged: 3 pods"


def test_a_section_with_a_body_of_its_own_stays_and_gets_only_the_new_findings() -> None:
    sections = [Section("probes", "Probes", _pods_body), *SECTIONS[2:]]
    text = to_markdown(report(), sections)
    assert "### Probes: no findings\n\n0 changes; unchanged: 3 pods\n\n" in text
    text = to_markdown(report(NEW, old(1), old(2)), sections)
    assert (
        "### Probes: 1 failure; 2 already at base\n\n1 changes; unchanged: 3 pods\n\n<details>"
        in (text)
    )


def test_the_report_says_what_kubernetes_it_rendered_for() -> None:
    caps = {"kube_version": "v1.29.0", "kube_version_default": False, "api_versions": ["x.io/v1"]}
    chart = ChartSummary("app", "app", "1.0.0", "1.0.1", ("default",), extra={"capabilities": caps})
    text = to_markdown(Report("a" * 40, "b" * 40, "a" * 40, (chart,), ()), [])
    assert (
        "profiles default). Rendered for Kubernetes `v1.29.0`, with API versions `x.io/v1` "
        "besides Helm's and the charts' CRDs." in text
    )
    helm_default = {**caps, "kube_version_default": True, "api_versions": []}
    chart = replace(chart, extra={"capabilities": helm_default})
    text = to_markdown(Report("a" * 40, "b" * 40, "a" * 40, (chart,), ()), [])
    assert "Rendered for Kubernetes `v1.29.0` (Helm's default)." in text
