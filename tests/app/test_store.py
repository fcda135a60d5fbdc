"""The shared key store: atomic claims with expiry, on SQLite and on a real Redis.

SQLite's expiry is the store's own, read from an injected clock that the tests move by hand.
Redis's is the server's own (PX), so those cases keep a short real TTL: they check the TTL Redis
was given, then wait (with a deadline) for the key to lapse instead of sleeping a fixed time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.app.store import Lease, RedisStore, SqliteStore, Store
from tests.support.app_harness import wait_for
from tests.support.clock import ManualClock
from tests.support.redis_server import redis_server


@dataclass
class Backend:
    store: Store
    clock: ManualClock | None  # None: Redis keeps the time

    def pttl(self, key: str) -> int:
        """Milliseconds Redis will keep `key`."""
        assert isinstance(self.store, RedisStore)
        return int(self.store.client.pttl(RedisStore.PREFIX + key))


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        clock = ManualClock()
        yield Backend(SqliteStore(tmp_path / "state.db", clock), clock)
        return
    store = RedisStore(request.getfixturevalue("redis_url"))
    store.client.flushdb()  # one server for the module, a clean database per test
    yield Backend(store, None)
    store.client.close()


def test_a_claim_is_won_once_until_it_expires(backend: Backend) -> None:
    store = backend.store
    assert store.claim("delivery:1", ttl=0.3)
    assert not store.claim("delivery:1", ttl=0.3)
    if backend.clock is not None:
        backend.clock.advance(0.29)
        assert not store.claim("delivery:1", ttl=0.3)
        backend.clock.advance(0.02)
        assert store.claim("delivery:1", ttl=0.3)
    else:
        assert 0 < backend.pttl("delivery:1") <= 300
        wait_for(lambda: store.claim("delivery:1", ttl=0.3), timeout=5, what="the claim to lapse")


def test_put_extends_and_release_frees(backend: Backend) -> None:
    store = backend.store
    assert store.claim("k", ttl=0.2)
    store.put("k", ttl=60)
    if backend.clock is not None:
        backend.clock.advance(59)
    else:
        assert backend.pttl("k") > 59_000  # the claim's 0.2 s is replaced by the put's minute
    assert store.exists("k") and not store.claim("k", ttl=1)
    store.release("k")
    assert not store.exists("k") and store.claim("k", ttl=1)


def test_racing_claims_have_exactly_one_winner(backend: Backend) -> None:
    wins: list[bool] = []
    start = threading.Barrier(8)

    def race() -> None:
        start.wait()
        wins.append(backend.store.claim("lock:acme/charts#1", ttl=30))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_a_lease_outlives_its_ttl_while_held_and_frees_on_release(backend: Backend) -> None:
    lease = Lease(backend.store, "lock:acme/charts#2", ttl=0.3)
    assert lease.acquire()
    # Renewals come every ttl/3 of real time. Each round moves SQLite's clock, then waits for two
    # more renewals: the second of them began after the move, so it extended from the new time.
    # Two rounds take SQLite's clock past the ttl (0.4 s), and Redis's real time past it too.
    for _ in range(2):
        if backend.clock is not None:
            backend.clock.advance(0.2)
        target = lease.renewals + 2

        def renewed(n: int = target) -> bool:
            return lease.renewals >= n

        wait_for(renewed, timeout=5, what=f"renewal {target}")
    assert not Lease(backend.store, "lock:acme/charts#2", ttl=0.3).acquire()
    lease.release()
    again = Lease(backend.store, "lock:acme/charts#2", ttl=0.3)
    assert again.acquire()
    again.release()


def test_ping_names_a_broken_store(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    sqlite = SqliteStore(db)
    assert sqlite.ping() is None
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    db.write_bytes(b"not a database" * 100)
    assert "state database" in (sqlite.ping() or "")
    assert (RedisStore("redis://127.0.0.1:1/0").ping() or "").startswith("redis:")
