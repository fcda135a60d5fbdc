"""The queue: delivery dedupe, and the journal that gives a dead worker's job to another."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from bot.app.jobspec import RepoRef, ReviewJob, job_from_dict, job_to_dict
from bot.app.queue import ALIVE, HEARTBEAT_TTL, RUNNING, HueyJobQueue
from bot.app.settings import Settings

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
    assert job_from_dict(data) == ReviewJob(**{**JOB.__dict__, "recovered": True})


def test_a_job_with_a_heartbeat_is_left_alone(queue: HueyJobQueue) -> None:
    queue.store.put(f"{RUNNING}r2", 3600, json.dumps(job_to_dict(JOB)))
    queue.store.put(f"{ALIVE}r2", HEARTBEAT_TTL)
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
    queue: HueyJobQueue,
) -> None:
    # The receiver claimed the id and died before the job was queued: the claim was never
    # confirmed, so it lapses (after CLAIM_TTL; shortened here) and GitHub's redelivery runs.
    assert queue.store.claim("delivery:d-9", ttl=0.1)
    assert not queue.submit("d-9", "pull_request", JOB)  # still in flight: a true duplicate
    time.sleep(0.2)
    assert queue.submit("d-9", "pull_request", JOB)
    assert queue.depth() == 1
    assert not queue.submit("d-9", "pull_request", JOB)  # confirmed now: dropped for days
