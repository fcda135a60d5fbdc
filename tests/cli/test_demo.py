"""`chart-review demo`'s headings scenario: PR #107 quotes a heading that only acme/backend's open
PR #12 holds, and the demo reviews it linked to an acme/backend built from examples/linked/."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import checks as registry
from bot.cli.demo import (
    EXAMPLES,
    TextOutput,
    build_linked,
    link_resolver,
    load_prs,
    review_scenario,
    run,
    scenarios,
)
from bot.cli.report_writer import ReportWriter
from bot.errors import UsageError
from bot.model.context import no_links
from checks import REGISTRY
from tests.support.report_schema import validated

HEADINGS = EXAMPLES / "prs" / "headings"
PR_LINE = re.compile(r"^## PR #\d+ .*\n\n", re.MULTILINE)
MERGE_ORDER = (
    "client/values.yaml line 8 quotes “ROLLBACK ON THE DEGRADED PATH” in "
    "acme/backend:deploy/jobs.yaml, which has no such heading yet on acme/backend's develop; it "
    "appears once on the head of acme/backend#12 (line 8). This resolves only once acme/backend#12 "
    "merges; merge that first."
)


def pr_section(out: str, number: int) -> str:
    """One PR's report in the demo's output: from its `## PR #N` line to the next PR or scenario."""
    _, _, rest = out.partition(f"## PR #{number} ")
    assert rest, f"no report for PR #{number}"
    return rest.split("\n## PR #")[0].split("\n# Scenario: ")[0]


def test_pr_107_gets_one_merge_order_warning_naming_the_backend_pr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = TextOutput(ReportWriter("json", REGISTRY.sections()))
    review_scenario(HEADINGS, tmp_path / "headings", tmp_path / "linked", out, REGISTRY)
    report = json.loads(pr_section(capsys.readouterr().out, 107).partition("\n\n")[2])
    (finding,) = report["findings"]
    assert (finding["check"], finding["rule"], finding["severity"]) == (
        "headings",
        "merge-order",
        "warning",
    )
    assert (finding["path"], finding["line"], finding["message"]) == (
        "client/values.yaml",
        8,
        MERGE_ORDER,
    )
    assert (finding["data"]["repo"], finding["data"]["pr"]) == ("acme/backend", 12)


def test_the_demo_prints_the_warning_in_the_headings_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(keep=str(tmp_path / "demo"), fmt="markdown", registry=registry.REGISTRY) == 0
    report = pr_section(capsys.readouterr().out, 107)
    assert "## ✅ chart-review: 1 warning\n" in report
    headings = report.partition("### Heading references: ")[2]
    assert headings.startswith("1 warning\n")
    row = f"| ⚠️ |  |  | **Quoted heading exists only in another open PR**<br>{MERGE_ORDER} |"
    assert row in headings
    assert "❌" not in report
    backend = tmp_path / "demo" / "linked" / "headings" / "acme" / "backend"
    assert (backend / "deploy" / "jobs.yaml").is_file()


def test_every_report_of_chart_review_demo_format_json_matches_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(keep=str(tmp_path / "demo"), fmt="json", registry=registry.REGISTRY) == 0
    # Each PR's report runs from its `## PR #N` line to the next scenario, PR or closing words.
    texts = PR_LINE.split(capsys.readouterr().out)[1:]
    reports = [validated(json.JSONDecoder().raw_decode(text)[0]) for text in texts]
    still_open = [pr for s in scenarios(EXAMPLES) for pr in load_prs(s) if not pr.merge]
    assert len(reports) == len(still_open)
    assert {f["check"] for r in reports for f in r["findings"]} >= {"qos", "version", "headings"}


def test_a_linked_repository_is_read_as_review_link_reads_it(tmp_path: Path) -> None:
    backend = build_linked(EXAMPLES, "acme/backend", tmp_path / "backend")
    (pr,) = load_prs(HEADINGS)
    linked = link_resolver(pr, {"acme/backend": backend})("acme/backend")
    assert linked.git is not None and linked.develop is not None
    assert [p.number for p in linked.open_prs] == [12]
    assert link_resolver(replace(pr, links=()), {}) is no_links


def test_a_link_with_no_example_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match="links: acme/nothing: no .*examples/linked/acme/nothing/repo"
    ):
        build_linked(EXAMPLES, "acme/nothing", tmp_path / "nothing")
    with pytest.raises(UsageError, match="links: '../repo' is not a repository OWNER/NAME"):
        build_linked(EXAMPLES, "../repo", tmp_path / "escape")
