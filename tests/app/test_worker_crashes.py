"""A job that kills its worker is finished, not forgotten: real `chart-review worker` processes,
each SIGKILLed in the middle of the same review, until the reaper gives that head up; every run
is then completed neutral with the reason, the summary comment says it, and the next push is
reviewed as usual."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.give_up import GAVE_UP
from bot.app.queue import ALIVE, CRASH_LIMIT
from bot.app.store import SqliteStore
from tests.support.app_harness import pull_request_event, wait_for
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.check_runs import family_verdicts
from tests.support.cluster import Cluster, app_env, cluster, json_lines
from tests.support.fakegithub import FakeGitHub

COMPLETE_RUN = r"/check-runs/\d+$"


class Killer:
    """SIGKILLs the newest worker when it sends its first PATCH after "reviewing" (the engine ran,
    the runs are in progress, the verdicts are on their way), and answers that request 502, so
    that nothing the dead worker sent is applied. A restarted review's PATCHes that set its runs
    back in progress come before its "reviewing" and pass."""

    def __init__(self, running: Cluster, github: FakeGitHub, kills: int) -> None:
        self.running, self.github, self.left = running, github, kills
        self.killed: list[int] = []  # pids
        self.changed = threading.Condition()
        github.on("PATCH", COMPLETE_RUN, self._hook, times=10_000)

    def _hook(self) -> None:
        index = len(self.running.workers) - 1
        worker = self.running.workers[index]
        if self.left == 0 or worker.pid in self.killed:
            return
        log = self.running.logs / f"worker-{index}.log"
        if not any(line.get("message") == "reviewing" for line in json_lines(log)):
            return
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        self.github.inject("PATCH", COMPLETE_RUN, 502)  # runs under the same request: this one
        self.left -= 1
        with self.changed:
            self.killed.append(worker.pid)
            self.changed.notify_all()

    def wait_for_kill(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.killed) >= count, timeout=60), (
                f"no worker was killed mid-review (kill {count})"
            )


def _as_if_the_dead_worker_timed_out(data: Path) -> None:
    """The dead worker's heartbeat and PR lease lapse now rather than after JOB_HEARTBEAT_SECONDS: the reaper and
    the lease are what is tested, not the wait (tests/app/test_resilience.py waits it out)."""
    store = SqliteStore(data / "state.db")
    for key in store.scan(ALIVE) + store.scan("lock:"):
        store.release(key)


@pytest.fixture
def crashing(tmp_path: Path, github: FakeGitHub) -> Iterator[Cluster]:
    env = app_env(github, tmp_path / "data", WORKERS="1")
    with cluster(env, tmp_path / "logs", workers=1) as running:
        yield running


def _settled(github: FakeGitHub, head: str) -> bool:
    runs = github.check_runs(REPO, head)
    summary = [c.body for c in github.issue_comments(REPO, 1)]
    return (
        len(runs) >= len(RUNS)
        and all(r.status == "completed" for r in runs)
        and any(head[:12] in body for body in summary)
    )


def test_a_review_that_kills_its_worker_twice_is_completed_neutral(
    crashing: Cluster, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    killer = Killer(crashing, github, kills=CRASH_LIMIT)
    payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
    assert crashing.deliver("pull_request", payload, "crash-1").status_code == 202
    for kill in range(1, CRASH_LIMIT + 1):
        killer.wait_for_kill(kill)
        statuses = {r.name: r.status for r in github.check_runs(REPO, scenario.head)}
        assert statuses == dict.fromkeys(RUNS, "in_progress"), f"after kill {kill}"
        _as_if_the_dead_worker_timed_out(tmp_path / "data")
        crashing.add_worker()  # its reaper re-queues the dead worker's job at once

    wait_for(lambda: _settled(github, scenario.head), timeout=30, what="the head given up")
    runs = github.check_runs(REPO, scenario.head)
    assert sorted(r.name for r in runs) == sorted(RUNS)
    assert {(r.status, r.conclusion, r.title, r.summary) for r in runs} == {
        ("completed", "neutral", "could not complete", GAVE_UP)
    }
    [comment] = github.issue_comments(REPO, 1)
    assert "<!-- chart-review:summary -->" in comment.body and GAVE_UP in comment.body
    requeued = [
        line["message"]
        for line in crashing.worker_logs()
        if "its worker stopped mid-run" in line.get("message", "")
    ]
    assert [m.split("(")[-1] for m in requeued] == ["crash 1 of 2)", "crash 2 of 2)"]

    git = scenario.git.checkout("wait-for-mysql")
    pushed = git.write("notes.md", "pushed after the crashes\n").commit("Push again").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=pushed)
    payload = pull_request_event("synchronize", REPO, scenario.clone_url, 1, pushed)
    assert crashing.deliver("pull_request", payload, "crash-2").status_code == 202

    wait_for(lambda: _settled(github, pushed), timeout=30, what="the new head reviewed")
    verdicts = family_verdicts(github.check_runs(REPO, pushed))
    assert verdicts["chart-review/qos"] == "failure"
    assert verdicts["chart-review/version"] == "success"
    [comment] = github.issue_comments(REPO, 1)
    assert GAVE_UP not in comment.body
    assert [r for r in github.check_runs(REPO) if r.status != "completed"] == []
