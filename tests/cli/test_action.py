"""The GitHub Action's entry point run as a process, with a real `pull_request` payload and the
environment a runner sets, against the fake GitHub: it publishes what the App publishes for the same
PR, falls back to annotations and the job summary on a fork's read-only token, writes the step's
outputs, and says in one line what a workflow lacks."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app.github.app import AppCredentials, GitHubApp
from bot.app.review_pull import review_pull
from bot.cli.action_github import ACTIONS_APP_ID, ACTIONS_LOGIN
from bot.engine.context import no_links
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from tests.support.app_harness import example
from tests.support.app_scenario import REPO, RUNS, TEMPLATE, Scenario
from tests.support.fakegithub import FakeGitHub

ROOT = Path(__file__).resolve().parents[2]
ACTION_TIMEOUT = 300
FORK = "contributor/charts"


@dataclass(frozen=True)
class ActionRun:
    code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]


def _event(s: Scenario, fork: bool = False) -> dict[str, Any]:
    """GitHub's example `pull_request.opened`, made PR #1 of acme/charts."""
    payload = copy.deepcopy(example("pull_request.opened"))
    owner, name = REPO.split("/")
    payload["repository"].update(full_name=REPO, name=name)
    payload["repository"]["owner"]["login"] = owner
    payload.pop("installation", None)  # a workflow's event names no App installation
    pr = payload["pull_request"]
    pr["number"] = payload["number"] = 1
    pr["title"], pr["body"] = "Update the chart", None
    pr["head"].update(sha=s.head, ref="wait-for-mysql")
    pr["base"].update(sha=s.base, ref="develop")
    pr["base"]["repo"].update(full_name=REPO, private=False)
    pr["head"]["repo"].update(full_name=FORK if fork else REPO, fork=fork)
    return payload


def _checkout(tmp_path: Path, s: Scenario) -> Path:
    """What actions/checkout leaves: develop only, so the PR's head must be fetched from origin."""
    workspace = tmp_path / "workspace"
    subprocess.run(
        ["git", "clone", "-q", "--single-branch", "-b", "develop", s.clone_url, str(workspace)],
        check=True,
    )
    return workspace


def _runner_env(tmp_path: Path, github: FakeGitHub, s: Scenario, **extra: str) -> dict[str, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(_event(s, fork=extra.pop("fork", "") == "yes")))
    (tmp_path / "runner").mkdir(exist_ok=True)
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env = {
        **kept,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": github.issue_token(),
        "GITHUB_WORKSPACE": str(_checkout(tmp_path, s)),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "runner" / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "runner" / "output"),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_SECONDS_BETWEEN_REQUESTS": "0",
        "GITHUB_SECONDS_BETWEEN_WRITES": "0",
        "GITHUB_RETRY_BACKOFF": "0.05",
    }
    env.update(extra)
    return env


def _run(env: dict[str, str]) -> ActionRun:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli.action"],
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
    return ActionRun(proc.returncode, proc.stdout, proc.stderr, summary, outputs)


def _as_actions(github: FakeGitHub) -> None:
    """What a workflow token writes, GitHub attributes to the GitHub Actions app."""
    with github.state.lock:
        github.state.app_id = ACTIONS_APP_ID
        github.state.app_slug = "github-actions"
        github.state.bot_login = ACTIONS_LOGIN


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
    _as_actions(github)
    _register(github, scenario)
    done = _run(_runner_env(tmp_path, github, scenario))

    assert done.code == 1, done.stderr  # the QoS downgrade is a failure; fail-on is `failure`
    assert _published(github, scenario.head) == by_app
    assert {c.user for c in github.issue_comments(REPO, 1)} == {ACTIONS_LOGIN}
    report = json.loads(Path(done.outputs["report"]).read_text())
    failures = [f for f in report["findings"] if f["severity"] == "failure"]
    assert done.outputs == {
        "failures": str(len(failures)),
        "warnings": str(sum(f["severity"] == "warning" for f in report["findings"])),
        "report": str(tmp_path / "runner" / "chart-review-report.json"),
        "diff": str(tmp_path / "runner" / "chart-review-report.diff"),
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
    _as_actions(github)
    first = _run(_runner_env(tmp_path / "one", github, scenario))
    assert first.code == 1, first.stderr
    second = _run(_runner_env(tmp_path / "two", github, scenario, INPUT_FAIL_ON="never"))

    assert second.code == 0, second.stderr  # `fail-on: never`, with the same failure
    assert second.outputs["failures"] == first.outputs["failures"] == "1"
    assert sorted(r.name for r in github.check_runs(REPO, scenario.head)) == sorted(RUNS)
    assert len(github.issue_comments(REPO, 1)) == 1
    assert len(github.review_comments(REPO, 1)) == 1


def test_comment_false_publishes_the_check_runs_only(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    _as_actions(github)
    done = _run(_runner_env(tmp_path, github, scenario, INPUT_COMMENT="false"))

    assert done.code == 1, done.stderr
    conclusions = {r.name: r.conclusion for r in github.check_runs(REPO, scenario.head)}
    assert conclusions == {**{name: "success" for name in RUNS}, "chart-review/qos": "failure"}
    assert github.issue_comments(REPO, 1) == [] and github.review_comments(REPO, 1) == []


def test_a_fork_s_read_only_token_gets_annotations_and_the_job_summary(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    _as_actions(github)
    forbidden = {"message": "Resource not accessible by integration"}
    github.inject("POST", r"/check-runs$", 403, times=100, body=forbidden)
    done = _run(_runner_env(tmp_path, github, scenario, fork="yes"))

    assert done.code == 1, done.stderr
    assert github.check_runs(REPO) == []
    assert github.calls("POST", r"/comments$|/reviews$") == []  # nothing more is tried
    init_line = (TEMPLATE, _line_of(scenario, TEMPLATE, "- name: wait-for-mysql"))
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith(f"::error file={init_line[0]},line={init_line[1]},")
    assert "chart-review/qos" in errors[0] and "Burstable" in errors[0]
    assert "Burstable" in done.summary and scenario.head[:12] in done.summary
    assert done.outputs["failures"] == "1"


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
    done = _run(_runner_env(tmp_path, github, scenario, **change))

    assert done.code == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(error) == 1 and says in error[0], done.stderr
    assert done.outputs == {} and github.check_runs(REPO) == []


def test_a_refused_check_run_outside_a_fork_names_the_permission_to_add(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    _as_actions(github)
    github.inject("POST", r"/check-runs$", 403, times=100)
    done = _run(_runner_env(tmp_path, github, scenario))

    assert done.code == 2, done.stderr
    assert "permissions: checks: write" in done.stderr.splitlines()[-1]
    assert done.outputs == {} and github.issue_comments(REPO, 1) == []
