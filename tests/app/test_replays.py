"""What a replayed delivery or a repeated command can cost: the App for real (uvicorn on loopback,
the worker, PyGithub against the fake GitHub). Where an hour must pass, the store's clock is moved
by hand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.app.commands import DENIED_REACTION, HELP, HELP_REACTION, PR_REPLIES, REPLY_TTL
from bot.app.jobspec import Job
from bot.app.queue import HueyJobQueue
from bot.app.settings import Settings
from bot.app.store import SqliteStore
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
from tests.support.clock import ManualClock
from tests.support.fakegithub import FakeGitHub
from tests.support.fakegithub.builders import IssueComment
from tests.support.logs import JsonLogs
from tests.support.servers import serve_app
from webhooks.app import create_app
from webhooks.caps import BODY_CLAIM_TTL
from webhooks.server import server_options


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


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def timed_app(tmp_path: Path, github: FakeGitHub, clock: ManualClock) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data"), clock=clock) as running:
        yield running


def command(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, user: str, text: str, delivery: str
) -> IssueComment:
    """`user` comments `text` on PR #1 and the App gets the delivery; returns once it is done."""
    comment = github.add_issue_comment(REPO, 1, text, user=user)
    before = len(github.issue_comments(REPO, 1))
    event = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, user)
    assert app.deliver("issue_comment", event, delivery=delivery).status_code == 202

    def answered() -> bool:  # in words or by a reaction, and the job is over
        # Nothing running either: the clock can then move without a lease lapsing mid-job.
        written = len(github.issue_comments(REPO, 1)) > before
        return (written or bool(github.reactions(comment.id))) and app.idle()

    wait_for(answered, what=f"{delivery} answered")
    return comment


def bot_replies(github: FakeGitHub, commands: list[IssueComment]) -> list[str]:
    asked = {c.id for c in commands}
    return [c.body for c in github.issue_comments(REPO, 1) if c.id not in asked]


def reactions(github: FakeGitHub, comments: list[IssueComment]) -> list[list[str]]:
    return [[r.content for r in github.reactions(c.id)] for c in comments]


def commands_metric(app: RunningApp, command_name: str, outcome: str) -> float:
    text = httpx.get(f"{app.url}/metrics", timeout=5).text
    line = f'chart_review_commands_total{{command="{command_name}",outcome="{outcome}"}} '
    found = [row for row in text.splitlines() if row.startswith(line)]
    return float(found[0].split()[-1]) if found else 0.0


def test_help_is_answered_once_a_commenter_and_hour_and_a_pr_gets_at_most_its_cap(
    timed_app: RunningApp,
    github: FakeGitHub,
    scenario: Scenario,
    clock: ManualClock,
    json_logs: JsonLogs,
) -> None:
    # Anyone may ask for help, and each answer is a comment the bot writes: a stranger asking
    # three times is answered once; the rest are reactions, one to each command.
    asks = [
        command(timed_app, github, scenario, "stranger", "/chart-review help", f"ask-{n}")
        for n in range(3)
    ]
    assert bot_replies(github, asks) == [HELP]
    assert reactions(github, asks) == [[], [HELP_REACTION], [HELP_REACTION]]
    (held_back,) = [line for line in json_logs.about("ask-1") if line["level"] == "WARNING"]
    assert held_back["message"] == (
        "help reply to @stranger held back: answered within 1 h (one help reply per commenter "
        "and PR); reacted +1"
    )

    # Other accounts: the PR gets PR_REPLIES answers in the hour, refusals included, then none.
    others = [
        command(timed_app, github, scenario, f"account-{n}", "/chart-review help", f"other-{n}")
        for n in range(PR_REPLIES + 1)
    ]
    github.set_permission(REPO, "visitor", "read")
    refused = command(timed_app, github, scenario, "visitor", "/chart-review", "visitor")
    assert bot_replies(github, asks + others + [refused]) == [HELP] * PR_REPLIES
    assert reactions(github, others + [refused]) == [[]] * (PR_REPLIES - 1) + [
        [HELP_REACTION],
        [HELP_REACTION],
        [DENIED_REACTION],
    ]
    (cap,) = [line for line in json_logs.about("visitor") if line["level"] == "WARNING"]
    assert cap["message"] == (
        f"denied reply to @visitor held back: {REPO}#1 had {PR_REPLIES} command replies within "
        "1 h, its cap; reacted confused"
    )

    # An hour on, the stranger is answered again.
    clock.advance(REPLY_TTL)
    again = command(timed_app, github, scenario, "stranger", "/chart-review help", "next-hour")
    assert bot_replies(github, asks + others + [refused, again]) == [HELP] * (PR_REPLIES + 1)
    assert reactions(github, [again]) == [[]]
    held = commands_metric(timed_app, "help", "held back")
    answered = commands_metric(timed_app, "help", "answered")
    assert (answered, held) == (PR_REPLIES + 1, 4)  # 8 help commands, 4 comments written
    assert commands_metric(timed_app, "run", "held back") == 1
    assert github.check_runs(REPO) == []


def test_a_body_replayed_under_new_ids_is_dropped_for_an_hour(
    tmp_path: Path, clock: ManualClock, json_logs: JsonLogs
) -> None:
    """A captured delivery sent again under a fresh delivery id (the id is outside the
    signature) is answered 200 and queues nothing, for BODY_CLAIM_TTL after it was queued."""
    assert BODY_CLAIM_TTL >= 3600
    settings = Settings(data_dir=tmp_path / "data", webhook_secret=SECRET.encode())
    queue = HueyJobQueue.from_settings(settings)
    claims = SqliteStore(tmp_path / "claims.db", clock)
    payload = pull_request_event("opened", REPO, "unused", 1, "a" * 40)
    body = json.dumps(payload).encode()

    def send(url: str, delivery: str) -> httpx.Response:
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(body),
        }
        return httpx.post(f"{url}/webhook", content=body, headers=headers, timeout=10)

    app = create_app(settings, queue, store=claims)
    with serve_app(app, server_options()) as url:
        first = send(url, "captured")
        clock.advance(BODY_CLAIM_TTL - 1)
        replayed = send(url, "replay-1")
        clock.advance(1)
        later = send(url, "replay-2")
        metrics = httpx.get(f"{url}/metrics", timeout=5).text

    assert (first.status_code, first.json()) == (202, {"outcome": "queued"})
    assert (replayed.status_code, replayed.json()) == (200, {"outcome": "duplicate delivery"})
    assert later.status_code == 202  # the claim has lapsed: two genuine events may share a body
    assert queue.depth() == 2
    dropped = [line["message"] for line in json_logs.about("replay-1")]
    assert dropped == ["dropped: its body seen before", "delivery pull_request: duplicate delivery"]
    counted = 'chart_review_deliveries_total{event="pull_request",outcome="duplicate delivery"} 1.0'
    assert counted in metrics.splitlines()
