"""The GitHub Action's entry point run as a process, with a real `pull_request` payload and the
environment a runner sets, against the fake GitHub: it publishes what the App publishes for the same
PR, falls back to annotations and the job summary on a fork's read-only token, writes the step's
outputs, and says in one line what a workflow lacks."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bot.action.api import ACTIONS_LOGIN
from bot.app.github.app import AppCredentials, GitHubApp
from bot.app.review_pull import review_pull
from bot.git.repo import GitRepo
from bot.model.context import no_links
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from tests.support.action_job import as_actions, runner_env
from tests.support.app_scenario import (
    NAMES_BEFORE_ONE_RUN,
    PER_CHECK_CONFIG,
    PER_CHECK_RUNS,
    REPO,
    RUNS,
    TEMPLATE,
    Scenario,
    build_scenario,
)
from tests.support.fakegithub import FakeGitHub
from tests.support.fakegithub.scopes import READ_ALL
from tests.support.report_schema import validated

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = json.loads((ROOT / "tests/fixtures/sarif/sarif-schema-2.1.0.json").read_text())
ACTION_TIMEOUT = 300
# What GitHub's secondary rate limits ask (REST best practices): serial requests, and at least a
# second between two writes; PyGithub's default spacing, which the Action keeps.
SECONDS_BETWEEN_WRITES = 1.0
# A typical PR (one chart, up to ten findings) publishes in at most this many API requests,
# reads included, on its first review and on a re-run alike.
TYPICAL_PR_REQUESTS = 8
WRITES = ("POST", "PATCH", "PUT", "DELETE")


@dataclass(frozen=True)
class ActionRun:
    code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]


def _run(env: dict[str, str]) -> ActionRun:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "action"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=ACTION_TIMEOUT,
    )
    summary_path, output_path = Path(env["GITHUB_STEP_SUMMARY"]), Path(env["GITHUB_OUTPUT"])
    summary = summary_path.read_text() if summary_path.exists() else ""
    lines = output_path.read_text().splitlines() if output_path.exists() else []
    outputs = dict(line.split("=", 1) for line in lines)
    if "report" in outputs and Path(outputs["report"]).is_file():  # whatever the test reads of it
        validated(Path(outputs["report"]).read_text())
    return ActionRun(proc.returncode, proc.stdout, proc.stderr, summary, outputs)


def _published(github: FakeGitHub, head: str) -> dict[str, Any]:
    """Everything a reviewer sees of one review on PR #1."""
    runs = sorted(github.check_runs(REPO, head), key=lambda r: r.name)
    return {
        "runs": [
            (r.name, r.status, r.conclusion, r.title, r.summary, r.text, r.annotations)
            for r in runs
        ],
        "comments": [c.body for c in github.issue_comments(REPO, 1)],
        "reviews": [(r.body, r.state, r.commit_id) for r in github.reviews(REPO, 1)],
        "inline": [(c.path, c.line, c.body) for c in github.review_comments(REPO, 1)],
    }


def _app_review(github: FakeGitHub, s: Scenario) -> None:
    """The App's worker step for PR #1: review_pull with an installation's client."""
    creds = AppCredentials(github.app_id, github.app_private_key, github.url, 0.0, 0.0, 0.05)
    client = GitHubApp(creds).repo(REPO, 1)
    pr = client.pull(1)
    assert pr is not None
    git = GitRepo(s.git.path)
    try:
        review_pull(client, git, pr, client.open_pulls(), EmbeddedHelm(), RenderCache(), _no_links)
    finally:
        git.close()


def _no_links(home: object, config: object) -> Any:
    return no_links


def _register(github: FakeGitHub, s: Scenario) -> None:
    """acme/charts and PR #1 on a fake reset since, as build_scenario made them."""
    github.add_repo(
        REPO, default_branch="develop", clone_url=s.clone_url, branches={"develop": s.base}
    )
    github.add_pull(
        REPO,
        number=1,
        head_sha=s.head,
        base_sha=s.base,
        head_ref="wait-for-mysql",
        base_ref="develop",
    )


def test_the_action_publishes_what_the_app_publishes_for_the_same_pr(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    _app_review(github, scenario)
    by_app = _published(github, scenario.head)
    assert {name for name, *_ in by_app["runs"]} == set(RUNS)
    assert len(by_app["comments"]) == len(by_app["inline"]) == 1  # the App's review went through
    github.assert_no_violations()

    github.reset()
    as_actions(github)
    _register(github, scenario)
    done = _run(runner_env(tmp_path, github, scenario))

    assert done.code == 1, done.stderr  # the QoS downgrade is a failure; fail-on is `failure`
    assert _published(github, scenario.head) == by_app
    assert {c.user for c in github.issue_comments(REPO, 1)} == {ACTIONS_LOGIN}
    report = validated(Path(done.outputs["report"]).read_text())
    failures = [f for f in report["findings"] if f["severity"] == "failure"]
    assert done.outputs == {
        "failures": str(len(failures)),
        "warnings": str(sum(f["severity"] == "warning" for f in report["findings"])),
        "report": str(tmp_path / "runner" / "chart-review-report.json"),
        "diff": str(tmp_path / "runner" / "chart-review-report.diff"),
        "output-file": "",  # no `format`
    }
    # The whole rendered diff, as `review --diff` prints it: the init container the PR added.
    diff = Path(done.outputs["diff"]).read_text()
    assert diff.startswith("# client: burst, equal: same diff\n--- a/Deployment/default/"), diff
    assert "\n+      initContainers:\n" in diff and "\n+        name: wait-for-mysql\n" in diff
    assert [(f["check"], f["rule"]) for f in failures] == [("qos", "downgrade")]
    assert "Burstable" in done.summary and "wait-for-mysql" in done.summary
    assert "::error" not in done.stdout  # the check runs carry the annotations


def test_a_second_run_edits_its_runs_and_summary_and_repeats_no_inline_comment(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    first = _run(runner_env(tmp_path / "one", github, scenario))
    assert first.code == 1, first.stderr
    second = _run(runner_env(tmp_path / "two", github, scenario, INPUT_FAIL_ON="never"))

    assert second.code == 0, second.stderr  # `fail-on: never`, with the same failure
    assert second.outputs["failures"] == first.outputs["failures"] == "1"
    assert sorted(r.name for r in github.check_runs(REPO, scenario.head)) == sorted(RUNS)
    assert len(github.issue_comments(REPO, 1)) == 1
    assert len(github.review_comments(REPO, 1)) == 1


def test_comment_false_publishes_the_check_run_only(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    done = _run(runner_env(tmp_path, github, scenario, INPUT_COMMENT="false"))

    assert done.code == 1, done.stderr
    conclusions = {r.name: r.conclusion for r in github.check_runs(REPO, scenario.head)}
    assert conclusions == {"chart-review": "failure"}
    assert github.issue_comments(REPO, 1) == [] and github.review_comments(REPO, 1) == []


def _annotations(stdout: str, level: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"::{level} ")]


def _said(stdout: str, level: str) -> list[str]:
    """The step's own notices and warnings (`::notice::…`, no file): what it could not do."""
    return [line for line in stdout.splitlines() if line.startswith(f"::{level}::")]


def _assert_degraded(done: ActionRun, s: Scenario, tmp_path: Path) -> None:
    """Everything but the check run: one annotation per finding on its line, the job summary,
    the outputs, the report and the diff, and the exit status `fail-on` asks."""
    assert done.code == 1, done.stderr  # the QoS downgrade; fail-on is `failure`
    init_line = (TEMPLATE, _line_of(s, TEMPLATE, "- name: wait-for-mysql"))
    [error] = _annotations(done.stdout, "error")
    assert error.startswith(f"::error file={init_line[0]},line={init_line[1]},")
    assert "chart-review/qos" in error and "Burstable" in error
    assert "Burstable" in done.summary and s.head[:12] in done.summary
    assert done.outputs["failures"] == "1"
    report = validated(Path(done.outputs["report"]).read_text())
    assert [f["rule"] for f in report["findings"] if f["severity"] == "failure"] == ["downgrade"]
    assert Path(done.outputs["diff"]).read_text().startswith("# client: burst, equal: same diff\n")
    assert done.outputs["report"] == str(tmp_path / "runner" / "chart-review-report.json")


def test_a_fork_s_read_only_token_gets_annotations_and_the_job_summary(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    done = _run(runner_env(tmp_path, github, scenario, READ_ALL, fork="yes"))

    _assert_degraded(done, scenario, tmp_path)
    assert github.check_runs(REPO) == []
    assert github.calls("POST", r"/comments$|/reviews$") == []  # a fork's token: nothing more tried
    assert len(_said(done.stdout, "notice")) == 1 and _said(done.stdout, "warning") == []
    assert "read-only" in _said(done.stdout, "notice")[0]


def test_without_checks_write_a_same_repository_pr_still_gets_everything_else(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    """`permissions: read-all`, as a real repository's workflow has: GitHub refuses the check run
    before the review and the comments after it; the review runs all the same, says each refusal
    once, and exits by `fail-on`."""
    as_actions(github)
    done = _run(runner_env(tmp_path, github, scenario, READ_ALL))

    _assert_degraded(done, scenario, tmp_path)
    assert [c.status for c in github.calls("POST", r"/check-runs$")] == [403]
    assert github.check_runs(REPO) == [] and github.issue_comments(REPO, 1) == []
    [warning] = _said(done.stdout, "warning")
    assert "GitHub refused to create the check run (403)" in warning
    assert "`permissions: checks: write`" in warning
    [notice] = _said(done.stdout, "notice")  # one, though both comment writes were refused
    assert "GitHub refused the PR comments (403)" in notice
    assert "`permissions: pull-requests: write`" in notice
    refused = [c for c in github.calls() if c.status == 403]
    assert {c.method for c in refused} == {"POST"}
    assert len(refused) == 2  # the check run, then the first comment: the second is not tried


def test_with_pull_requests_write_but_no_checks_write_the_comments_still_go_out(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    permissions = {**READ_ALL, "pull-requests": "write"}
    done = _run(runner_env(tmp_path, github, scenario, permissions))

    _assert_degraded(done, scenario, tmp_path)
    assert github.check_runs(REPO) == [] and len(_said(done.stdout, "warning")) == 1
    assert _said(done.stdout, "notice") == []
    [comment] = github.issue_comments(REPO, 1)
    assert comment.body.endswith(
        "Details are in the job summary of the workflow run; annotations are on the files.\n"
    )
    assert "check run" not in comment.body
    assert len(github.review_comments(REPO, 1)) == 1


def test_a_refused_comment_after_the_check_run_is_one_notice(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    permissions = {**READ_ALL, "checks": "write"}
    done = _run(runner_env(tmp_path, github, scenario, permissions))

    assert done.code == 1, done.stderr
    assert {r.name: r.conclusion for r in github.check_runs(REPO, scenario.head)} == {
        "chart-review": "failure"
    }
    [notice] = _said(done.stdout, "notice")
    assert "GitHub refused the PR comments (403)" in notice
    assert _annotations(done.stdout, "error") == []  # the check run carries them
    assert done.outputs["failures"] == "1" and "Burstable" in done.summary


def _line_of(s: Scenario, path: str, text: str) -> int:
    content = s.git.run_git("show", f"{s.head}:{path}").splitlines()
    return next(n for n, line in enumerate(content, start=1) if text in line)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"GITHUB_EVENT_NAME": "push"}, "`on: pull_request`"),
        ({"GITHUB_TOKEN": ""}, "github-token: ${{ github.token }}"),
        ({"GITHUB_TOKEN": "ghs_not_a_token"}, "GitHub refused the token (401)"),
        ({"INPUT_FAIL_ON": "sometimes"}, "input fail-on: expected failure|warning|never"),
    ],
    ids=["not-a-pr-event", "no-token", "bad-token", "bad-fail-on"],
)
def test_bad_input_says_in_one_line_what_the_workflow_lacks(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario, change: dict[str, str], says: str
) -> None:
    done = _run(runner_env(tmp_path, github, scenario, **change))

    assert done.code == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and says in error[0], done.stderr
    assert done.outputs == {} and github.check_runs(REPO) == []


def test_a_typical_pr_publishes_in_at_most_8_requests_paced_as_github_asks(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    """One chart, a few findings, the pacing left at its default: every request of the run counted
    (reads included: the open PRs, the runs and comments already there), on the first review and
    on a re-run, which edits instead of adding; no two writes less than a second apart."""
    as_actions(github)
    paced = {"GITHUB_SECONDS_BETWEEN_REQUESTS": "", "GITHUB_SECONDS_BETWEEN_WRITES": ""}
    first = _run(runner_env(tmp_path / "one", github, scenario, **paced))
    first_calls = github.calls()
    second = _run(runner_env(tmp_path / "two", github, scenario, **paced))
    second_calls = github.calls()[len(first_calls) :]

    assert first.code == second.code == 1, first.stderr + second.stderr
    report = validated(Path(first.outputs["report"]).read_text())
    assert 1 <= len(report["findings"]) <= 10  # a typical PR
    for calls in (first_calls, second_calls):
        assert len(calls) <= TYPICAL_PR_REQUESTS, [(c.method, c.path) for c in calls]
        writes = [c.at for c in calls if c.method in WRITES]
        gaps = [later - earlier for earlier, later in zip(writes, writes[1:], strict=False)]
        assert min(gaps) >= SECONDS_BETWEEN_WRITES, gaps
    assert [r.name for r in github.check_runs(REPO, scenario.head)] == RUNS
    assert len(github.issue_comments(REPO, 1)) == len(github.review_comments(REPO, 1)) == 1


def test_check_runs_per_check_keeps_today_s_run_names_exactly(
    tmp_path: Path, github: FakeGitHub
) -> None:
    """For branch protection that requires `chart-review/qos` and the others by name."""
    s = build_scenario(tmp_path / "repo", github, config=PER_CHECK_CONFIG)
    as_actions(github)
    done = _run(runner_env(tmp_path, github, s))

    assert done.code == 1, done.stderr
    conclusions = {r.name: r.conclusion for r in github.check_runs(REPO, s.head)}
    assert sorted(conclusions) == sorted(PER_CHECK_RUNS)
    assert set(NAMES_BEFORE_ONE_RUN) <= set(conclusions)
    assert conclusions["chart-review/qos"] == "failure"
    assert conclusions["chart-review/version"] == "success"
    [comment] = github.issue_comments(REPO, 1)
    assert "- ❌ QoS classes (`chart-review/qos`): 1 failure" in comment.body
    assert comment.body.endswith(
        "Details and annotations are in each `chart-review/…` check run.\n"
    )


def test_format_sarif_leaves_a_file_for_upload_sarif_valid_against_the_schema(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    done = _run(runner_env(tmp_path, github, scenario, INPUT_FORMAT="sarif"))

    assert done.code == 1, done.stderr
    sarif = Path(done.outputs["output-file"])
    assert sarif == tmp_path / "runner" / "chart-review.sarif"
    log = json.loads(sarif.read_text())
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(log)
    [run] = log["runs"]
    assert run["automationDetails"] == {"id": "chart-review/review/"}
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert [r["ruleId"] for r in errors] == ["qos/downgrade"]
    assert errors[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == TEMPLATE


def test_the_review_inputs_reach_the_review(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    given = {
        "INPUT_KUBE_VERSION": "1.29",
        "INPUT_API_VERSIONS": "monitoring.coreos.com/v1",
        "INPUT_SET": "replicaCount=2",
        "INPUT_NO_OPEN_PRS": "true",
        "INPUT_OFFLINE": "true",
        "INPUT_FORMAT": "json",
        "INPUT_OUTPUT_FILE": "out/report.json",
    }
    done = _run(runner_env(tmp_path, github, scenario, **given))

    assert done.code == 1, done.stderr
    assert github.calls("GET", r"/pulls$") == []  # no-open-prs: not listed
    report = validated(Path(done.outputs["output-file"]).read_text())
    assert done.outputs["output-file"] == str(tmp_path / "workspace" / "out" / "report.json")
    caps = report["charts"][0]["capabilities"]
    assert caps["kube_version"] == "v1.29.0"
    assert caps["api_versions"] == ["monitoring.coreos.com/v1"]
    assert "Kubernetes `v1.29.0`" in done.summary


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"INPUT_VALUES": "ci/missing.yaml"}, "input values: --values "),
        ({"INPUT_SET": "a.b"}, "input set: --set 'a.b': key \"b\" has no value"),
        (
            {"INPUT_KUBE_VERSION": "latest"},
            "input kube-version: 'latest' is not a Kubernetes version",
        ),
        ({"INPUT_FORMAT": "xml"}, "input format: expected markdown|json|sarif|github, got 'xml'"),
    ],
    ids=["values", "set", "kube-version", "format"],
)
def test_a_bad_review_input_stops_the_step_before_anything_is_published(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario, change: dict[str, str], says: str
) -> None:
    done = _run(runner_env(tmp_path, github, scenario, **change))

    assert done.code == 2, done.stderr
    [error] = [line for line in done.stderr.splitlines() if "error:" in line]
    assert says in error, error
    assert github.calls("POST") == [] and github.calls("PATCH") == []
