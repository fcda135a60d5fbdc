"""The queue: delivery dedupe, and the journal that gives a dead worker's job to another."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bot.app.jobspec import RepoRef, ReviewJob, job_from_dict, job_to_dict
from bot.app.queue import (
    ALIVE,
    CLAIM_TTL,
    CRASH_LIMIT,
    REAP_INTERVAL,
    RUNNING,
    HueyJobQueue,
    Reaper,
    make_huey,
)
from bot.app.settings import Settings
from bot.app.store import SqliteStore
from tests.support.clock import ManualClock

JOB = ReviewJob(RepoRef("acme/charts", 1, "/srv/charts"), 7, "a" * 40, "pull_request.opened")


@pytest.fixture
def queue(tmp_path: Path) -> HueyJobQueue:
    return HueyJobQueue.from_settings(Settings(data_dir=tmp_path))


def _run_next(queue: HueyJobQueue) -> None:
    task = queue.huey.dequeue()
    assert task is not None
    queue.huey.execute(task)


def test_a_delivery_is_queued_once(queue: HueyJobQueue) -> None:
    assert queue.submit("d-1", "pull_request", JOB)
    assert not queue.submit("d-1", "pull_request", JOB)
    assert queue.submit("d-2", "ping", None)  # remembered, nothing to do
    assert queue.depth() == 1


def test_a_job_whose_worker_died_is_queued_again_once(queue: HueyJobQueue) -> None:
    # What a worker killed mid-run leaves: the journal entry, and no heartbeat.
    queue.store.put(f"{RUNNING}r1", 3600, json.dumps({**job_to_dict(JOB), "id": "r1"}))

    assert queue.recover() == 1
    assert queue.recover() == 0
    [(data,)] = [t.args for t in queue.huey.pending()]
    assert job_from_dict(data) == replace(JOB, recovered=True, crashes=1)
    assert data["id"] != "r1"  # its next run is reaped under its own id, should it die again


def test_a_job_with_a_heartbeat_is_left_alone(queue: HueyJobQueue) -> None:
    queue.store.put(f"{RUNNING}r2", 3600, json.dumps(job_to_dict(JOB)))
    queue.store.put(f"{ALIVE}r2", queue.heartbeat)
    assert queue.recover() == 0


def test_the_journal_is_cleared_when_the_job_ends_even_by_an_error(queue: HueyJobQueue) -> None:
    seen: list[str] = []

    def handler(job: object) -> None:
        seen.append(str(queue.store.scan(RUNNING)))
        raise RuntimeError("boom")

    queue.handler = handler
    queue.enqueue(JOB)
    _run_next(queue)  # huey records the error; the worker goes on

    assert seen and "running:" in seen[0]
    assert queue.store.scan(RUNNING) == [] and queue.store.scan(ALIVE) == []


def test_a_delivery_whose_receiver_died_before_queueing_it_is_taken_on_redelivery(
    tmp_path: Path,
) -> None:
    # The receiver claimed the id and died before the job was queued: the claim was never
    # confirmed, so it lapses after CLAIM_TTL and GitHub's redelivery runs.
    clock = ManualClock()
    settings = Settings(data_dir=tmp_path)
    queue = HueyJobQueue(make_huey(settings), SqliteStore(tmp_path / "state.db", clock))
    assert queue.store.claim("delivery:d-9", ttl=CLAIM_TTL)
    assert not queue.submit("d-9", "pull_request", JOB)  # still in flight: a true duplicate
    clock.advance(CLAIM_TTL - 1)
    assert not queue.submit("d-9", "pull_request", JOB)
    clock.advance(1)
    assert queue.submit("d-9", "pull_request", JOB)
    assert queue.depth() == 1
    assert not queue.submit("d-9", "pull_request", JOB)  # confirmed now: dropped for days


def test_a_journal_entry_that_is_no_job_is_dropped_not_queued(
    queue: HueyJobQueue, caplog: pytest.LogCaptureFixture
) -> None:
    # The journal lives in the same Redis as the queue: what it holds is checked like a queue entry.
    queue.store.put(f"{RUNNING}r3", 3600, json.dumps({"kind": "shell", "cmd": "id"}))
    queue.store.put(f"{RUNNING}r4", 3600, "\x80not json")

    assert queue.recover() == 0
    assert queue.depth() == 0
    assert sorted(r.getMessage().split(":")[0] for r in caplog.records) == [
        "journal entry r3 dropped, not re-queued",
        "journal entry r4 dropped, not re-queued",
    ]


def _die(queue: HueyJobQueue, data: dict[str, object]) -> dict[str, object]:
    """A worker takes the job and is killed mid-run; the reaper re-queues it: what it re-queued."""
    queue.store.put(f"{RUNNING}{data['id']}", 3600, json.dumps(data))
    assert queue.recover() == 1
    task = queue.huey.dequeue()
    assert task is not None
    [again] = task.args
    return dict(again)


def test_the_crashes_of_a_head_are_counted_across_its_jobs_and_a_new_head_starts_afresh(
    queue: HueyJobQueue,
) -> None:
    first = _die(queue, {**job_to_dict(JOB), "id": "r1"})
    assert first["crashes"] == 1
    # The re-queued job dies too; so would another job about the same head.
    assert _die(queue, first)["crashes"] == CRASH_LIMIT
    redelivered = replace(JOB, reason="check_run.rerequested")
    assert _die(queue, {**job_to_dict(redelivered), "id": "r2"})["crashes"] == CRASH_LIMIT + 1

    pushed = replace(JOB, head_sha="b" * 40, reason="pull_request.synchronize")
    assert _die(queue, {**job_to_dict(pushed), "id": "r3"})["crashes"] == 1


def test_a_job_keeps_its_own_count_when_the_store_has_lost_it(queue: HueyJobQueue) -> None:
    # The store was flushed (a Redis restart without persistence); the journal entry still says.
    assert _die(queue, {**job_to_dict(replace(JOB, crashes=1)), "id": "r1"})["crashes"] == 2


def test_the_heartbeat_is_the_settings_and_the_reaper_looks_three_times_within_it(
    tmp_path: Path,
) -> None:
    settings = Settings(data_dir=tmp_path, job_heartbeat=6.0)
    queue = HueyJobQueue.from_settings(settings)
    assert queue.heartbeat == 6.0
    assert Reaper(queue).interval == 2.0
    assert Reaper(HueyJobQueue.from_settings(Settings(data_dir=tmp_path))).interval == REAP_INTERVAL
