"""Precision of the `headings` check: only an explicit reference may fail a PR. One test for each
kind of false failure seen on a real repository's PRs (recreated synthetically), the reference
forms told apart, and the case that started the check."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.model.context import OpenPR
from bot.model.report import Finding, Severity
from checks.headings.check import explain, run
from checks.headings.refs import references
from checks.headings.units import prose_units
from tests.checks import test_headings
from tests.checks.test_headings import JOBS, chart_repo, only
from tests.support.gitbuilder import GitBuilder

# The real-git context of tests/checks/test_headings.py, shared.
repos = test_headings.repos
make_ctx = test_headings.make_ctx

EGRESS = "client/templates/egress-check.yaml"
EGRESS_YAML = """\
apiVersion: batch/v1
kind: Job
spec:
  template:
    spec:
      containers:
        - name: check
          # EGRESS LOCKDOWN CHECK — warns, never blocks the release.
          command: ["sh", "-c", "echo 'WARNING  EGRESS LOCKDOWN NOT ENFORCED'"]
"""


def failures(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity is Severity.FAILURE]


def egress_repo(path: Path) -> GitBuilder:
    return chart_repo(path).write(EGRESS, EGRESS_YAML).commit("egress").branch("pr")


# -- the eight real false failures ----------------------------------------------------------------


def test_caps_prose_near_a_file_in_the_description_is_at_most_a_notice(
    tmp_path: Path, make_ctx
) -> None:
    g = egress_repo(tmp_path / "r").write("values.yaml", "egress: {}\n").commit("values")
    body = f"The lockdown is now EGRESS LOCKDOWN CHECKED at install; {EGRESS} runs it."
    finding = only(run(make_ctx(g, body=body)))
    assert (finding.rule, finding.severity) == ("loose-reference", Severity.NOTICE)
    assert finding.data["kind"] == "missing"
    assert finding.message == (
        f"the PR description mentions “EGRESS LOCKDOWN CHECKED” near {EGRESS}, though not in a "
        "reference form: that file has no such heading at the PR head. Closest headings there: "
        "“EGRESS LOCKDOWN CHECK” (line 8). If it is meant as a reference, write it as: see "
        f"“EGRESS LOCKDOWN CHECKED” in {EGRESS}. If not, nothing to do."
    )


def test_caps_prose_near_a_file_in_a_comment_is_at_most_a_notice(tmp_path: Path, make_ctx) -> None:
    g = egress_repo(tmp_path / "r")
    g.write("values.yaml", f"# Runs the EGRESS LOCKDOWN CHECKS from {EGRESS}.\negress: {{}}\n")
    findings = run(make_ctx(g.commit("values")))
    assert failures(findings) == []
    assert [f.rule for f in findings] == ["loose-reference"]


def test_a_log_line_quoted_near_the_file_that_prints_it_is_nothing(
    tmp_path: Path, make_ctx
) -> None:
    g = egress_repo(tmp_path / "r").write("values.yaml", "x: 1\n").commit("x")
    body = f"On kind the job prints `WARNING  EGRESS LOCKDOWN NOT ENFORCED` from {EGRESS}."
    ctx = make_ctx(g, body=body)
    assert run(ctx) == []
    assert explain(ctx) == [
        "not checked: “WARNING EGRESS LOCKDOWN NOT ENFORCED” in the PR description: "
        f"{EGRESS} line 9 stands there as text, not as a heading: a quote of what the file says, "
        "not a reference"
    ]


def test_words_the_file_holds_as_text_never_fail_even_in_a_reference_form(
    tmp_path: Path, make_ctx
) -> None:
    g = egress_repo(tmp_path / "r")
    g.write(
        "docs/egress.md", f"# Egress\n\nSee `WARNING  EGRESS LOCKDOWN NOT ENFORCED` in {EGRESS}.\n"
    )
    assert run(make_ctx(g.commit("docs"))) == []


def test_sql_in_a_fence_or_a_code_span_is_no_reference(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r")
    g.write(
        "db/files/init.sql", "-- ALTER USERS LAST — after the grants\nGRANT ALL ON db TO app;\n"
    )
    g.commit("sql").branch("pr").write("db/values.yaml", "rotate: true\n").commit("rotate")
    body = (
        "Rotates the root password, as db/files/init.sql should have:\n"
        "```sql\nALTER USER root IDENTIFIED BY 'changeme';\n```\n\n"
        "It runs `ALTER USER root` once, after db/files/init.sql."
    )
    assert run(make_ctx(g, body=body)) == []


def test_a_pasted_helm_error_is_no_reference(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r")
    g.write(
        "db/templates/statefulset.yaml",
        "# UPGRADE FAILS ON RESIZE — see the PVC notes\nkind: StatefulSet\n",
    )
    g.commit("sts").branch("pr").write("db/values.yaml", "size: 2Gi\n")
    error = (
        'Error: UPGRADE FAILED: cannot patch "release-db" with kind StatefulSet: '
        "db/templates/statefulset.yaml: spec: Forbidden"
    )
    ctx = make_ctx(g.commit(f"Fix the resize\n\n{error}"), body=f"Fixes:\n```\n{error}\n```\n")
    findings = run(ctx)
    assert failures(findings) == []
    assert {f.data["source"] for f in findings} <= {f"commit {g.sha('pr')[:7]}"}


def test_a_commit_messages_own_headings_are_not_references(tmp_path: Path, make_ctx) -> None:
    g = egress_repo(tmp_path / "r").write("values.yaml", "egress: {deny: true}\n")
    message = (
        "Lock egress down by default\n\n"
        f"EGRESS LOCKDOWN CHANGED:\n{EGRESS} now denies egress unless values.yaml allows it.\n\n"
        "## Why this\nThe audit asked for it."
    )
    assert run(make_ctx(g.commit(message))) == []


def test_a_paraphrase_of_a_heading_is_at_most_a_notice(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr")
    g.write(
        "docs/worker.md",
        "# Worker\n\nThe worker will ROLL BACK ON A DEGRADED PATH, as "
        "jobs-manager-deployment.yaml does.\n",
    )
    findings = run(make_ctx(g.commit("docs")))
    assert failures(findings) == []
    assert [(f.rule, f.severity) for f in findings] in ([], [("loose-reference", Severity.NOTICE)])


# -- the forms ------------------------------------------------------------------------------------


def forms(text: str) -> list[tuple[str, bool]]:
    found = [r for unit in prose_units(text) for r in references(unit, lambda f: True)]
    return [(r.text, r.explicit) for r in found]


@pytest.mark.parametrize(
    "text",
    [
        "See ROLLBACK ON THE DEGRADED PATH in templates/jobs.yaml.",
        "see also `ROLLBACK ON THE DEGRADED PATH` in templates/jobs.yaml",
        "the heading ROLLBACK ON THE DEGRADED PATH appears once, in templates/jobs.yaml",
        "The `ROLLBACK ON THE DEGRADED PATH` note in templates/jobs.yaml explains it.",
        "ROLLBACK ON THE DEGRADED PATH (templates/jobs.yaml) is why.",
        "templates/jobs.yaml § ROLLBACK ON THE DEGRADED PATH",
        "per “ROLLBACK ON THE DEGRADED PATH” of templates/jobs.yaml",
        "acme/backend:deploy/jobs.yaml says ROLLBACK ON THE DEGRADED PATH",
    ],
)
def test_explicit_forms(text: str) -> None:
    assert forms(text) == [("ROLLBACK ON THE DEGRADED PATH", True)]


@pytest.mark.parametrize(
    "text",
    [
        "ROLLBACK ON THE DEGRADED PATH in templates/jobs.yaml",
        "We ROLLBACK ON THE DEGRADED PATH; templates/jobs.yaml does it.",
        "templates/jobs.yaml logs `ROLLBACK ON THE DEGRADED PATH` on failure",
        "See the notes. ROLLBACK ON THE DEGRADED PATH is in templates/jobs.yaml.",
    ],
)
def test_loose_forms(text: str) -> None:
    assert forms(text) == [("ROLLBACK ON THE DEGRADED PATH", False)]


def test_fenced_code_and_own_headings_of_pr_text_hold_no_mention() -> None:
    text = "WHAT CHANGED\ntemplates/jobs.yaml\n\n```\nSee SINGLE REPLICA in values.yaml\n```"
    assert forms(text) == []


# -- the case that started the check --------------------------------------------------------------

QUOTING = f"# see `ROLLBACK ON THE DEGRADED PATH` in {JOBS}\nreplicas: 1\n"


def test_the_rollback_comment_resolves_exactly_once(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").branch("pr").write("client/values.yaml", QUOTING)
    ctx = make_ctx(g.commit("quote"))
    assert run(ctx) == []
    assert explain(ctx) == [
        "resolved: “ROLLBACK ON THE DEGRADED PATH” (client/values.yaml line 1) → "
        f"{JOBS} line 4 at the PR head"
    ]


def test_the_rollback_heading_removed_at_head_fails(tmp_path: Path, make_ctx) -> None:
    g = chart_repo(tmp_path / "r").write("client/values.yaml", QUOTING).commit("quote")
    text = (
        (g.path / JOBS)
        .read_text()
        .replace("  # ROLLBACK ON THE DEGRADED PATH — recorded decision, backend#1922.\n", "")
    )
    finding = only(run(make_ctx(g.branch("pr").write(JOBS, text).commit("drop"))))
    assert (finding.rule, finding.severity, finding.path) == (
        "removed-still-quoted",
        Severity.FAILURE,
        JOBS,
    )
    assert finding.data["referrers"] == ["client/values.yaml line 1"]


def test_the_rollback_heading_only_on_another_open_pr_says_merge_that_first(
    tmp_path: Path, make_ctx
) -> None:
    g = GitBuilder(tmp_path / "r").write(JOBS, "kind: Deployment\n").commit("init")
    g.branch("other").write(JOBS, "# ROLLBACK ON THE DEGRADED PATH\nkind: Deployment\n").commit("o")
    g.checkout("develop").branch("pr").write("client/values.yaml", QUOTING).commit("quote")
    finding = only(run(make_ctx(g, open_prs=(OpenPR(number=9, head=g.sha("other")),))))
    assert (finding.rule, finding.severity, finding.path, finding.line) == (
        "merge-order",
        Severity.WARNING,
        "client/values.yaml",
        1,
    )
    assert finding.message.endswith("This resolves only once #9 merges; merge that first.")


def test_a_checklist_item_is_a_sentence_of_its_own() -> None:
    text = (
        "- [ ] Chart `version` in `Chart.yaml` is bumped\n"
        "- [ ] Breaking changes add a subsection under the readme's `## Upgrading` heading"
    )
    assert forms(text) == [("Upgrading", False)]
