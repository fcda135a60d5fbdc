"""The durable queue between the webhook receiver and the workers (huey), and delivery dedupe.

SqliteHuey under DATA_DIR when REDIS_URL is unset (one machine, nothing to install); RedisHuey when
it is set (any number of `chart-review worker` processes). Jobs travel as JSON of their own fields
(bot/app/job_serializer.py), never as pickles: an entry the bot did not write is dropped unread.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from huey import Huey, RedisHuey, SqliteHuey
from huey.exceptions import RetryTask

from bot.app.job_serializer import JobSerializer, RefusedEntry, checked_job
from bot.app.jobspec import Job, job_from_dict, job_subject, job_to_dict
from bot.app.settings import JOB_HEARTBEAT, Settings
from bot.app.store import Lease, RedisStore, SqliteStore, Store

log = logging.getLogger(__name__)

QUEUE_NAME = "chart-review"
TASK = "run_job"
TASK_NAME = f"{__name__}.{TASK}"  # how huey names a task: its function's module, then its name
# GitHub lets an operator redeliver a delivery for three days; remember ids a little longer.
DELIVERY_TTL = 4 * 24 * 3600.0
# A claim that was never confirmed (the process died between claiming and enqueueing) lapses after
# this long, so GitHub's redelivery of that delivery is not dropped as a duplicate.
CLAIM_TTL = 60.0

JOURNAL_TTL = 24 * 3600.0
RUNNING, ALIVE = "running:", "alive:"
REAP_INTERVAL = 5.0
# A job whose subject (the head a review is about) stopped its worker this many times (SIGKILL,
# the OOM killer) is not run again: the worker completes its runs neutral instead (bot/app/
# give_up.py), so that one head cannot take down worker after worker, nor leave a run in progress.
CRASH_LIMIT = 2
CRASHES = "crashes:"
CRASHES_TTL = JOURNAL_TTL

Handler = Callable[[Job], None]


class Busy(Exception):
    """The job cannot run yet (its PR is being reviewed by another worker): run it again later."""

    def __init__(self, reason: str, delay: float = 1.0) -> None:
        super().__init__(reason)
        self.delay = delay


def open_store(settings: Settings, clock: Callable[[], float] = time.time) -> Store:
    """`clock` is SQLite's expiry clock; Redis keeps its own time."""
    if settings.redis_url:
        return RedisStore(settings.redis_url)
    return SqliteStore(settings.data_dir / "state.db", clock)


class RefusingHuey(Huey):
    """Drops, with one log line, each entry that JobSerializer refuses, and reads on. huey's own
    consumer would log a traceback and back off, delaying the next valid job."""

    def dequeue(self) -> Any:
        while (data := self.storage.dequeue()) is not None:
            try:
                return self.deserialize_task(data)
            except RefusedEntry as refused:
                log_refused(refused)
        return None

    # huey's private loop over stored lists (the schedule, pending(), scheduled()); a rename in a
    # huey release would bring its traceback back, which tests/app/test_queue_security.py catches.
    def _deserialize_all(self, messages: list[bytes]) -> list[Any]:
        tasks = []
        for data in messages:
            try:
                tasks.append(self.deserialize_task(data))
            except RefusedEntry as refused:
                log_refused(refused)
        return tasks


class JobRedisHuey(RefusingHuey, RedisHuey):
    pass


class JobSqliteHuey(RefusingHuey, SqliteHuey):
    pass


def log_refused(refused: RefusedEntry) -> None:
    log.warning("queue entry dropped, not run: %s", refused)


def make_huey(settings: Settings) -> Huey:
    serializer = JobSerializer(TASK_NAME)
    if settings.redis_url:
        return JobRedisHuey(
            QUEUE_NAME, url=settings.redis_url, results=False, serializer=serializer
        )
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return JobSqliteHuey(
        QUEUE_NAME,
        filename=str(settings.data_dir / "queue.db"),
        results=False,
        serializer=serializer,
    )


class HueyJobQueue:
    """Implements bot.app.jobspec.JobQueue. `handler` is set in processes that run jobs."""

    def __init__(
        self,
        huey: Huey,
        store: Store,
        handler: Handler | None = None,
        heartbeat: float = JOB_HEARTBEAT,
    ) -> None:
        self.huey = huey
        self.store = store
        self.handler = handler
        self.heartbeat = heartbeat  # a worker silent this long is taken for dead (Settings)
        # What the handler holds that outlives a job (render processes): released by close().
        self.on_close: list[Callable[[], None]] = []
        self._task = huey.task(name=TASK)(self._execute)

    def close(self) -> None:
        for release in self.on_close:
            release()
        self.on_close.clear()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        handler: Handler | None = None,
        clock: Callable[[], float] = time.time,
    ) -> HueyJobQueue:
        store = open_store(settings, clock)
        return cls(make_huey(settings), store, handler, settings.job_heartbeat)

    def _execute(self, data: dict[str, Any]) -> None:
        if self.handler is None:
            raise RuntimeError("this process only enqueues; run `chart-review worker`")
        run_id = str(data.get("id") or uuid.uuid4().hex)
        # Both huey backends hand a job to one consumer and forget it. The journal remembers it
        # while it runs, so that if this process dies (SIGKILL, OOM, a lost machine) another
        # worker's reaper puts it back once the heartbeat stops.
        alive = Lease(self.store, f"{ALIVE}{run_id}", self.heartbeat)
        alive.acquire()
        self.store.put(f"{RUNNING}{run_id}", JOURNAL_TTL, json.dumps(data))
        try:
            self.handler(job_from_dict(data))
        except Busy as busy:
            raise RetryTask(str(busy), delay=busy.delay) from None
        finally:
            self.store.release(f"{RUNNING}{run_id}")
            alive.release()

    def recover(self) -> int:
        """Re-enqueue the jobs whose worker died mid-run; returns how many."""
        recovered = 0
        for key in self.store.scan(RUNNING):
            run_id = key[len(RUNNING) :]
            if self.store.exists(f"{ALIVE}{run_id}"):
                continue
            if not self.store.claim(f"reap:{run_id}", JOURNAL_TTL):
                continue  # another reaper took it
            raw = self.store.get(key)
            self.store.release(key)
            if raw is None:
                continue
            try:
                data = checked_job(json.loads(raw))
            except (ValueError, TypeError, RefusedEntry) as exc:
                log.warning("journal entry %s dropped, not re-queued: %s", run_id, exc)
                continue
            self._requeue(run_id, data)
            recovered += 1
        return recovered

    def _requeue(self, run_id: str, data: dict[str, Any]) -> None:
        crashes = self._count_crash(job_from_dict(data))
        # A new run id: the reap claim is per run, so the same id would never be reaped again.
        again = {**data, "id": uuid.uuid4().hex, "recovered": True, "crashes": crashes}
        log.warning(
            "re-queueing job %s as %s: its worker stopped mid-run (crash %d of %d)",
            run_id,
            again["id"],
            crashes,
            CRASH_LIMIT,
        )
        self._task(again)

    def _count_crash(self, job: Job) -> int:
        """This crash counted against the job's subject. The job's own count is the floor, should
        the store have lost the key."""
        key = f"{CRASHES}{job_subject(job)}"
        crashes = max(_count(self.store.get(key)), job.crashes) + 1
        self.store.put(key, CRASHES_TTL, str(crashes))
        return crashes

    def submit(self, delivery_id: str, event: str, job: Job | None) -> bool:
        key = f"delivery:{delivery_id}"
        if not self.store.claim(key, CLAIM_TTL):
            return False
        try:
            if job is not None:
                self.enqueue(job)
        except Exception:
            self.store.release(key)  # let GitHub's redelivery try again
            raise
        self.store.put(key, DELIVERY_TTL)
        return True

    def enqueue(self, job: Job) -> None:
        self._task({**job_to_dict(job), "id": uuid.uuid4().hex})

    def health(self) -> str | None:
        if reason := self.store.ping():
            return reason
        try:
            self.huey.pending_count()
        except Exception as exc:
            return f"queue: {type(exc).__name__}: {exc}".split(" @")[0]
        return None

    def depth(self) -> int:
        return int(self.huey.pending_count())

    def running(self) -> int:
        """Jobs a worker has taken and not yet finished: their journal entries."""
        return len(self.store.scan(RUNNING))


class Reaper:
    """Runs `queue.recover()` every few seconds beside a consumer."""

    def __init__(self, queue: HueyJobQueue, interval: float | None = None) -> None:
        # A third of the heartbeat at most: a dead worker's job waits for its lease to lapse,
        # not for the lease and then most of an interval.
        self.queue = queue
        self.interval = interval or min(REAP_INTERVAL, queue.heartbeat / 3)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        # A first pass at once: a worker started after a crash takes back what it left then,
        # not an interval later.
        while True:
            try:
                self.queue.recover()
            except Exception:
                log.exception("reaper pass failed; trying again")
            if self._stop.wait(self.interval):
                return


def _count(raw: str | None) -> int:
    try:
        return max(int(raw or 0), 0)
    except ValueError:
        return 0
