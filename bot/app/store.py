"""Keys with an expiry, shared by every process of one installation of the bot: delivery ids and
bodies already seen, per-PR locks, heads already reviewed, crash counts, version claims. SQLite
under DATA_DIR on one machine, Redis for many.

`claim` (set if absent) and `release` are atomic in both backends, so a delivery or a lock is
claimed by exactly one process however many race for it; `put`, `get`, `exists` and `scan` read
and refresh what was claimed.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import redis

log = logging.getLogger(__name__)


class Store(Protocol):
    def claim(self, key: str, ttl: float) -> bool:
        """Set `key` for `ttl` seconds unless it is set and unexpired; True when this call set it."""
        ...

    def put(self, key: str, ttl: float, value: str = "1") -> None:
        """Set `key` (to `value`) for `ttl` seconds whatever it held (extends a claim)."""
        ...

    def exists(self, key: str) -> bool: ...

    def get(self, key: str) -> str | None: ...

    def scan(self, prefix: str) -> list[str]:
        """Unexpired keys starting with `prefix`."""
        ...

    def release(self, key: str) -> None: ...

    def ping(self) -> str | None:
        """None when the store answers, else why not."""
        ...


class SqliteStore:
    """Expiry is this store's own: a row is live while its `expires` is after `clock()` (wall-clock
    seconds, as every process of the installation reads the same file)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._clock = clock
        self._local = threading.local()
        # Threads of one process queue here rather than in SQLite's busy handler, which sleeps
        # up to 100 ms between retries: that was the receiver's p99 under load.
        self._write = threading.Lock()
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS keys (key TEXT PRIMARY KEY, expires REAL, value TEXT)"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # One connection per thread, kept: opening one per operation cost a millisecond each.
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            # Under WAL, NORMAL loses at most the last transactions on power loss (a delivery id
            # forgotten, so a redelivery runs once more), never corrupts the file.
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        with self._write:
            yield db

    def claim(self, key: str, ttl: float) -> bool:
        now = self._clock()
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("DELETE FROM keys WHERE key = ? AND expires <= ?", (key, now))
                cur = db.execute("INSERT OR IGNORE INTO keys VALUES (?, ?, '1')", (key, now + ttl))
            except BaseException:
                db.execute("ROLLBACK")  # the connection is kept: leave no transaction open
                raise
            db.execute("COMMIT")
            return cur.rowcount == 1

    def put(self, key: str, ttl: float, value: str = "1") -> None:
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO keys VALUES (?, ?, ?)", (key, self._clock() + ttl, value)
            )

    def get(self, key: str) -> str | None:
        with self._connect() as db:
            row = db.execute(
                "SELECT value FROM keys WHERE key = ? AND expires > ?", (key, self._clock())
            ).fetchone()
            return None if row is None else str(row[0])

    def scan(self, prefix: str) -> list[str]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT key FROM keys WHERE substr(key, 1, ?) = ? AND expires > ?",
                (len(prefix), prefix, self._clock()),
            ).fetchall()
            return [str(r[0]) for r in rows]

    def exists(self, key: str) -> bool:
        with self._connect() as db:
            row = db.execute(
                "SELECT 1 FROM keys WHERE key = ? AND expires > ?", (key, self._clock())
            ).fetchone()
            return row is not None

    def release(self, key: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM keys WHERE key = ?", (key,))

    def ping(self) -> str | None:
        # A fresh connection: a kept one answers from its cache even when the file is gone or
        # damaged, and the health check must see what a new process would.
        try:
            db = sqlite3.connect(self.path, timeout=5)
            try:
                db.execute("SELECT 1 FROM keys LIMIT 1").fetchall()
            finally:
                db.close()
        except sqlite3.Error as exc:
            return f"state database {self.path}: {exc}"
        return None


class RedisStore:
    """Expiry is Redis's own (PX): the server's clock decides, so this store takes none."""

    PREFIX = "chart-review:"

    def __init__(self, url: str) -> None:
        # The App's extra (`[app]`): the command line and the Action keep their answers in memory.
        import redis

        self._failures: type[Exception] = redis.RedisError
        self.client: redis.Redis = redis.Redis.from_url(
            url, socket_timeout=5, socket_connect_timeout=5
        )

    def claim(self, key: str, ttl: float) -> bool:
        return bool(self.client.set(self.PREFIX + key, b"1", nx=True, px=_ms(ttl)))

    def put(self, key: str, ttl: float, value: str = "1") -> None:
        self.client.set(self.PREFIX + key, value.encode(), px=_ms(ttl))

    def get(self, key: str) -> str | None:
        raw = self.client.get(self.PREFIX + key)
        return None if raw is None else bytes(raw).decode()  # type: ignore[arg-type]

    def scan(self, prefix: str) -> list[str]:
        found = self.client.scan_iter(match=_glob_escape(self.PREFIX + prefix) + "*", count=500)
        return [bytes(k).decode()[len(self.PREFIX) :] for k in found]

    def exists(self, key: str) -> bool:
        return bool(self.client.exists(self.PREFIX + key))

    def release(self, key: str) -> None:
        self.client.delete(self.PREFIX + key)

    def ping(self) -> str | None:
        try:
            self.client.ping()
        except self._failures as exc:
            # The URL may hold a password: name the failure, not the URL.
            return f"redis: {type(exc).__name__}: {exc}".split(" @")[0]
        return None


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class Lease:
    """A lock on `key` held while a job runs, renewed in the background so that a long review keeps
    it, while a worker killed mid-review frees it within `ttl` seconds for another to take over."""

    def __init__(self, store: Store, key: str, ttl: float = 60.0) -> None:
        self.store, self.key, self.ttl = store, key, ttl
        self.renewals = 0  # how often the lease was extended so far
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> bool:
        if not self.store.claim(self.key, self.ttl):
            return False
        self._thread = threading.Thread(target=self._renew, name=f"lease {self.key}", daemon=True)
        self._thread.start()
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.store.put(self.key, self.ttl)
                self.renewals += 1
            except Exception as exc:  # the store is down: the job goes on, the lease may lapse
                log.warning("could not renew lease %s: %s", self.key, type(exc).__name__)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.store.release(self.key)
