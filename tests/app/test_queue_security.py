"""The queue executes nothing it did not write: entries pushed into the real Redis list or SQLite
table where huey keeps its jobs (a pickle that would touch a file, JSON of another shape, another
task, a malformed job) are dropped with one log line by a running consumer, which goes on to run
the next valid job once."""

from __future__ import annotations

import datetime
import json
import logging
import pathlib
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from huey.registry import Message
from huey.serializer import Serializer

from bot.app.job_serializer import MAX_ENTRY_BYTES, JobSerializer, RefusedEntry
from bot.app.jobspec import (
    CommandJob,
    Job,
    RecheckJob,
    RepoRef,
    ReviewJob,
    job_from_dict,
    job_to_dict,
)
from bot.app.queue import TASK_NAME, Busy, HueyJobQueue
from bot.app.settings import Settings
from bot.cli.serve import EmbeddedConsumer
from tests.support.app_harness import wait_for
from tests.support.redis_server import redis_server

REPO = RepoRef("acme/charts", 1, "/srv/charts")
JOBS: list[Job] = [
    ReviewJob(REPO, 7, "a" * 40, "pull_request.opened", delivery="d-1"),
    ReviewJob(REPO, None, "b" * 40, "check_run.rerequested", recovered=True),
    RecheckJob(REPO, "develop", "push"),
    RecheckJob(REPO, "main", "pull_request.closed", closed_number=3, delivery="d-2"),
    CommandJob(REPO, 7, 99, "octocat", "run", delivery="d-3"),
    CommandJob(REPO, 8, 100, "hubot", "help", recovered=True),
    ReviewJob(REPO, 7, "c" * 40, "pull_request.synchronize", recovered=True, crashes=2),
    RecheckJob(REPO, "develop", "push", delivery="d-4", recovered=True, crashes=1),
]


class _Touch:
    """Unpickling this runs `Path.touch(marker)`: what any code reaching the queue could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[Path]]:
        return (pathlib.Path.touch, (self.marker,))


def _pickled_job(marker: Path) -> bytes:
    """A message as huey's default serializer writes it, for our own task name."""
    message = Message(id="evil", name=TASK_NAME, args=(_Touch(marker),), kwargs={}, retries=0)
    return pickle.dumps(message)


@pytest.fixture(params=["redis", "sqlite"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    if request.param == "sqlite":
        yield Settings(data_dir=tmp_path / "data")
        return
    with redis_server(tmp_path / "redis") as url:
        yield Settings(data_dir=tmp_path / "data", redis_url=url)


def _push(queue: HueyJobQueue, settings: Settings, entry: bytes) -> None:
    """Writes `entry` where huey's storage keeps the queue, not through huey."""
    storage = queue.huey.storage
    if settings.redis_url:
        client = redis.Redis.from_url(settings.redis_url)
        client.lpush(storage.queue_key, entry)  # as RedisStorage.enqueue does
        client.close()
        return
    with sqlite3.connect(storage.filename) as db:
        db.execute(
            "insert into task (queue, data, priority) values (?, ?, 0)", (storage.name, entry)
        )


def _push_scheduled(queue: HueyJobQueue, settings: Settings, entry: bytes) -> None:
    """Writes `entry` into the schedule, due long ago, where a retried job waits."""
    storage = queue.huey.storage
    if settings.redis_url:
        client = redis.Redis.from_url(settings.redis_url)
        client.zadd(storage.schedule_key, {entry: 1.0})
        client.close()
        return
    with sqlite3.connect(storage.filename) as db:
        db.execute(
            "insert into schedule (queue, data, timestamp) values (?, ?, 1)", (storage.name, entry)
        )


def _dropped(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "bot.app.queue" and r.getMessage().startswith("queue entry dropped")
    ]


def test_the_pickle_payload_is_live(tmp_path: Path) -> None:
    # The control: huey's default serializer would run it on dequeue.
    marker = tmp_path / "control"
    Serializer().deserialize(_pickled_job(marker))
    assert marker.exists()


def test_a_consumer_drops_what_the_bot_did_not_write_and_runs_the_next_job(
    settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[Job] = []
    queue = HueyJobQueue.from_settings(settings, handler=ran.append)
    queued, scheduled = tmp_path / "pwned-queue", tmp_path / "pwned-schedule"
    valid = json.loads(JobSerializer(TASK_NAME).serialize(_message(JOBS[0])))
    entries = [
        _pickled_job(queued),
        json.dumps({"name": TASK_NAME, "args": [{"kind": "review"}]}).encode(),
        json.dumps({**valid, "task": "os.system"}).encode(),
        json.dumps({**valid, "job": {**valid["job"], "kind": "shell"}}).encode(),
    ]
    for entry in entries:
        _push(queue, settings, entry)
    _push_scheduled(queue, settings, _pickled_job(scheduled))
    queue.enqueue(JOBS[0])

    consumer = EmbeddedConsumer(queue.huey, workers=1, max_delay=0.1)
    with caplog.at_level(logging.WARNING):
        consumer.start()
        try:
            wait_for(lambda: ran and len(_dropped(caplog)) == 5, timeout=20, what="the valid job")
            queue.enqueue(JOBS[2])  # the consumer is still there for the next one
            wait_for(lambda: len(ran) == 2, timeout=20, what="the job after")
        finally:
            consumer.stop(graceful=True)

    assert not queued.exists() and not scheduled.exists()
    assert ran == [JOBS[0], JOBS[2]]
    assert queue.depth() == 0
    dropped = _dropped(caplog)
    assert sum("a pickle" in line for line in dropped) == 2, dropped
    assert any("not a job message: an object with keys args, name" in line for line in dropped)
    assert any("unknown task 'os.system'" in line for line in dropped)
    assert any("job rejected (KeyError: 'shell')" in line for line in dropped)
    # One line each, no traceback from huey's "Error reading from queue".
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


@pytest.mark.parametrize("job", JOBS, ids=lambda job: type(job).__name__)
def test_every_job_kind_survives_the_queue(settings: Settings, job: Job) -> None:
    queue = HueyJobQueue.from_settings(settings)
    queue.enqueue(job)
    task = queue.huey.dequeue()
    [data] = task.args
    assert job_from_dict(data) == job and data["id"]
    assert task.kwargs == {}


def test_a_retried_job_keeps_its_fields_and_its_time(tmp_path: Path) -> None:
    def busy(job: Job) -> None:
        raise Busy("another worker holds the PR", delay=30)

    queue = HueyJobQueue.from_settings(Settings(data_dir=tmp_path), handler=busy)
    queue.enqueue(JOBS[4])
    queue.huey.execute(queue.huey.dequeue())

    [task] = queue.huey.scheduled()
    assert job_from_dict(task.args[0]) == JOBS[4]
    assert task.eta > datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def test_the_message_round_trips_with_its_times() -> None:
    serializer = JobSerializer(TASK_NAME)
    when = datetime.datetime(2024, 5, 1, 12, 30, 15, 250)
    message = _message(JOBS[3])._replace(eta=when, retries=2, retry_delay=1.5, timeout=60)
    assert serializer.deserialize(serializer.serialize(message)) == message


def _message(job: Job) -> Message:
    return Message(
        id="m-1",
        name=TASK_NAME,
        args=({**job_to_dict(job), "id": "r-1"},),
        kwargs={},
        retries=0,
        retry_delay=0,
        retry_backoff=0,
    )


def _valid() -> dict[str, Any]:
    return dict(json.loads(JobSerializer(TASK_NAME).serialize(_message(JOBS[0]))))


def _with_job(**fields: Any) -> dict[str, Any]:
    valid = _valid()
    return {**valid, "job": {**valid["job"], **fields}}


def _with_repo(**fields: Any) -> dict[str, Any]:
    valid = _valid()
    return _with_job(repo={**valid["job"]["repo"], **fields})


def _command(command: str) -> str:
    job = CommandJob(REPO, 7, 99, "octocat", "run")
    data = json.loads(JobSerializer(TASK_NAME).serialize(_message(job)))["job"]
    return json.dumps({**data, "command": command})


REFUSED = {
    "not JSON": (b"\x00\x01 binary", "not JSON (9 bytes"),
    "pickle protocol 0": (pickle.dumps({"a": 1}, protocol=0), "not JSON"),
    "a list": (b"[1, 2]", "not a job message: a JSON list"),
    "a missing key": (json.dumps({k: v for k, v in _valid().items() if k != "eta"}), "keys"),
    "an extra key": (json.dumps({**_valid(), "on_complete": {}}), "on_complete"),
    "another format": (json.dumps({**_valid(), "format": 2}), "unknown message format 2"),
    "another task": (json.dumps({**_valid(), "task": "huey.api.evil"}), "unknown task"),
    "a missing job field": (
        json.dumps({**_valid(), "job": {"kind": "review", "repo": _valid()["job"]["repo"]}}),
        "job rejected (TypeError",
    ),
    "an extra job field": (json.dumps(_with_job(script="rm -rf /")), "'script'"),
    "a job of a wrong type": (json.dumps(_with_job(number="7")), "job field number: '7'"),
    "a bool for an int": (json.dumps(_with_repo(installation_id=True)), "installation_id: True"),
    "a bool for a count": (json.dumps(_with_job(crashes=True)), "job field crashes: True"),
    "a negative count": (json.dumps(_with_job(crashes=-1)), "crashes: -1 is not a count"),
    "a repo of a wrong type": (json.dumps(_with_job(repo="acme/charts")), "job rejected"),
    "a command not in the list": (
        json.dumps({**_valid(), "job": json.loads(_command("rm"))}),
        "job field command: 'rm'",
    ),
    "a run id not a string": (json.dumps(_with_job(id=5)), "run id is not a string"),
    "a bad time": (json.dumps({**_valid(), "eta": "tomorrow"}), "eta: 'tomorrow'"),
    "an aware time": (json.dumps({**_valid(), "eta": "2024-05-01T00:00:00+02:00"}), "eta:"),
    "a string for retries": (json.dumps({**_valid(), "retries": "0"}), "retries: '0'"),
    "NaN": (json.dumps({**_valid(), "retry_delay": float("nan")}), "not JSON"),
    "too big": (b" " * (MAX_ENTRY_BYTES + 1), "over the 65536"),
}


@pytest.mark.parametrize(("entry", "reason"), REFUSED.values(), ids=REFUSED.keys())
def test_the_serializer_refuses_every_other_shape(entry: str | bytes, reason: str) -> None:
    raw = entry.encode() if isinstance(entry, str) else entry
    with pytest.raises(RefusedEntry) as refused:
        JobSerializer(TASK_NAME).deserialize(raw)
    assert reason in str(refused.value)


def test_the_serializer_writes_nothing_but_our_task() -> None:
    serializer = JobSerializer(TASK_NAME)
    with pytest.raises(TypeError, match="stores only task messages"):
        serializer.serialize(("revoke", None))
    with pytest.raises(TypeError, match="runs only"):
        serializer.serialize(_message(JOBS[0])._replace(name="other.task"))
    with pytest.raises(TypeError, match="no pipeline"):
        serializer.serialize(_message(JOBS[0])._replace(on_complete=_message(JOBS[1])))
