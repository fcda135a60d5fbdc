"""What a replayed delivery or a repeated refused command can cost: the App for real (uvicorn on
loopback, the worker, PyGithub against the fake GitHub)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.app.jobs import DENIED_REACTION
from bot.app.jobspec import Job
from bot.app.queue import HueyJobQueue
from bot.app.settings import Settings
from tests.support.app_harness import (
    SECRET,
    RunningApp,
    app_settings,
    comment_event,
    pull_request_event,
    running_app,
    sign,
    wait_for,
)
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.fakegithub import FakeGitHub
from tests.support.servers import serve_app
from webhooks.app import create_app


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def _reviewed(github: FakeGitHub, head: str) -> bool:
    runs = github.check_runs(REPO, head)
    return len(runs) == len(RUNS) and all(r.status == "completed" for r in runs)


def test_a_signed_body_replayed_under_a_new_delivery_id_runs_one_job(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    # A command re-reviews every time it runs, so each job it becomes would show: one "eyes"
    # reaction and one round of check-run edits per job.
    github.set_permission(REPO, "maintainer", "write")
    comment = github.add_issue_comment(REPO, 1, "/chart-review", user="maintainer")
    event = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, "maintainer")

    first = app.deliver("issue_comment", event, delivery="original")
    replayed = app.deliver("issue_comment", event, delivery="forged-new-id")

    assert (first.status_code, first.json()) == (202, {"outcome": "queued"})
    assert (replayed.status_code, replayed.json()) == (200, {"outcome": "duplicate delivery"})
    wait_for(lambda: _reviewed(github, scenario.head), what="the commanded review")
    wait_for(app.idle, what="an empty queue")
    assert [r.content for r in github.reactions(comment.id)] == ["eyes"]
    assert len(github.calls("POST", r"/check-runs$")) == len(RUNS)


def test_a_user_without_permission_is_told_once_then_gets_a_reaction(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    github.set_permission(REPO, "visitor", "read")
    comments = [
        github.add_issue_comment(REPO, 1, text, user="visitor")
        for text in ("/chart-review", "/chart-review run")
    ]
    for n, comment in enumerate(comments):
        event = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, "visitor")
        assert app.deliver("issue_comment", event).status_code == 202
        if n == 0:  # in order: the first command is the one answered in words
            wait_for(lambda: len(github.issue_comments(REPO, 1)) == 3, what="the reply")

    second = comments[1].id
    wait_for(lambda: github.reactions(second), what="the reaction to the second command")
    wait_for(app.idle, what="an empty queue")
    replies = [c for c in github.issue_comments(REPO, 1) if c.id not in {c.id for c in comments}]
    assert len(replies) == 1
    assert "@visitor" in replies[0].body and "write, maintain or admin" in replies[0].body
    assert [r.content for r in github.reactions(second)] == [DENIED_REACTION]
    assert github.reactions(comments[0].id) == []
    assert github.check_runs(REPO) == []


class RefusesOnce:
    """The real queue, whose first submit fails as a full disk or a lost Redis would."""

    def __init__(self, queue: HueyJobQueue) -> None:
        self.queue, self.refused = queue, False

    def submit(self, delivery_id: str, event: str, job: Job | None) -> bool:
        if not self.refused:
            self.refused = True
            raise OSError("disk full")
        return self.queue.submit(delivery_id, event, job)

    def health(self) -> str | None:
        return self.queue.health()

    def depth(self) -> int:
        return self.queue.depth()


def test_a_redelivery_of_a_delivery_the_queue_refused_goes_through(tmp_path: Path) -> None:
    # GitHub's "Redeliver" sends the same body under the same id: the failed attempt must have
    # left neither claimed.
    settings = Settings(data_dir=tmp_path / "data", webhook_secret=SECRET.encode())
    queue = HueyJobQueue.from_settings(settings)
    payload = pull_request_event("opened", REPO, "unused", 1, "a" * 40)
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "d-1",
        "X-Hub-Signature-256": sign(body),
    }
    with serve_app(create_app(settings, RefusesOnce(queue), store=queue.store)) as url:
        failed = httpx.post(f"{url}/webhook", content=body, headers=headers, timeout=10)
        redelivered = httpx.post(f"{url}/webhook", content=body, headers=headers, timeout=10)
    assert failed.status_code == 503
    assert (redelivered.status_code, redelivered.json()) == (202, {"outcome": "queued"})
    assert queue.depth() == 1
