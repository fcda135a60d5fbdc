"""GitHub failing under the App: retried with backoff within a cap, and never a run left spinning
or a review that did not finish shown as a pass."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.github.app import RETRIES
from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.check_runs import family_verdicts
from tests.support.fakegithub import FakeGitHub


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def _open(app: RunningApp, s: Scenario) -> None:
    payload = pull_request_event("opened", REPO, s.clone_url, 1, s.head)
    assert app.deliver("pull_request", payload).status_code == 202


def _latest(github: FakeGitHub, head: str) -> dict[str, tuple[str, str | None]]:
    """The run GitHub shows per name: the newest."""
    runs = sorted(github.check_runs(REPO, head), key=lambda r: r.id)
    return {r.name: (r.status, r.conclusion) for r in runs}


def _summary_posted(github: FakeGitHub) -> bool:
    return any("chart-review:summary" in c.body for c in github.issue_comments(REPO, 1))


def _assert_normal_verdict(github: FakeGitHub, head: str) -> None:
    latest = _latest(github, head)
    assert latest == {"chart-review": ("completed", "failure")}
    verdicts = family_verdicts(github.check_runs(REPO, head))
    assert (verdicts["chart-review/qos"], verdicts["chart-review/version"]) == (
        "failure",
        "success",
    )


@pytest.mark.parametrize(
    ("method", "path", "status", "headers"),
    [
        ("POST", r"/check-runs$", 502, {}),
        ("PATCH", r"/check-runs/\d+$", 500, {}),
        ("GET", r"/pulls/1$", 403, {"Retry-After": "1"}),  # a secondary rate limit
        ("POST", r"/issues/1/comments$", 429, {"Retry-After": "1"}),
        ("POST", r"/check-runs$", 401, {}),  # the token expired mid-job
    ],
    ids=["502", "500-on-update", "403-secondary-rate-limit", "429", "401-expired-token"],
)
def test_a_passing_fault_is_retried_and_the_review_completes(
    app: RunningApp,
    github: FakeGitHub,
    scenario: Scenario,
    method: str,
    path: str,
    status: int,
    headers: dict[str, str],
) -> None:
    body = {
        403: {"message": "You have exceeded a secondary rate limit."},
        401: {"message": "Bad credentials"},
    }.get(status)
    times = 1 if status == 401 else 2  # a renewed token works; the other faults pass by retrying
    github.inject(method, path, status, times=times, headers=headers, body=body)
    _open(app, scenario)

    wait_for(lambda: _summary_posted(github), what="the review to be published")
    _assert_normal_verdict(github, scenario.head)
    assert len([c for c in github.calls(method, path) if c.status == status]) == times


def test_a_run_that_can_no_longer_be_updated_gets_its_verdict_on_a_new_run(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    github.inject("PATCH", r"/check-runs/\d+$", 404, times=1)
    _open(app, scenario)

    wait_for(lambda: _summary_posted(github), what="the review to be published")
    _assert_normal_verdict(github, scenario.head)


@pytest.mark.parametrize(
    "status", [503, 404], ids=["github-down-for-longer-than-the-retries", "pr-deleted-mid-review"]
)
def test_a_lasting_failure_leaves_no_run_in_progress_and_no_false_pass(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, status: int
) -> None:
    # GitHub stops answering for the PR's conversation once the runs have begun.
    github.inject("GET", r"/issues/1/comments$", status, times=100)
    _open(app, scenario)

    wait_for(lambda: _settled(github, scenario.head), what="every run completed")
    wait_for(app.idle)
    latest = _latest(github, scenario.head)
    assert all(status == "completed" for status, _ in latest.values())
    assert latest["chart-review"] == ("completed", "failure")
    assert family_verdicts(github.check_runs(REPO, scenario.head))["chart-review/qos"] == "failure"
    assert not _summary_posted(github)


def _settled(github: FakeGitHub, head: str) -> bool:
    latest = _latest(github, head)
    return len(latest) == len(RUNS) and all(s == "completed" for s, _ in latest.values())


def test_a_force_push_in_the_middle_of_a_review_ends_with_the_new_head_reviewed(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    git = scenario.git.checkout("wait-for-mysql")
    pushed = git.write("client/README.md", "# rewritten\n").commit("Force-pushed").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")

    def force_push() -> None:  # as the first verdict is being published
        github.update_pull(github.state.pulls[(REPO, 1)], head_sha=pushed)
        payload = pull_request_event("synchronize", REPO, scenario.clone_url, 1, pushed)
        assert app.deliver("pull_request", payload).status_code == 202

    github.on("PATCH", r"/check-runs/\d+$", force_push)
    _open(app, scenario)

    wait_for(lambda: _settled(github, pushed), what="the pushed head reviewed")
    wait_for(lambda: _settled(github, scenario.head), what="the first head's runs completed")
    wait_for(lambda: any(pushed[:12] in c.body for c in github.issue_comments(REPO, 1)))
    assert len(github.issue_comments(REPO, 1)) == 1
    assert not [r for r in github.check_runs(REPO) if r.status != "completed"]


def test_a_verdict_github_would_not_take_is_completed_as_could_not_complete(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    # The first run's completion fails past every retry (RETRIES + 1 attempts), then GitHub
    # recovers: that run and those not yet published say so; none says success.
    github.inject("PATCH", r"/check-runs/\d+$", 503, times=RETRIES + 1)
    _open(app, scenario)

    wait_for(lambda: _settled(github, scenario.head), what="every run completed")
    wait_for(app.idle)
    runs = github.check_runs(REPO, scenario.head)
    assert {r.conclusion for r in runs} == {"neutral"}
    assert all("could not complete" in r.summary and "will retry" in r.summary for r in runs)
    assert not _summary_posted(github)
