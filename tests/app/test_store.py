"""The shared key store: atomic claims with expiry, on SQLite and on a real Redis."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.store import Lease, RedisStore, SqliteStore, Store
from tests.support.redis_server import redis_server


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        yield SqliteStore(tmp_path / "state.db")
    else:
        with redis_server(tmp_path / "redis") as url:
            yield RedisStore(url)


def test_a_claim_is_won_once_until_it_expires(store: Store) -> None:
    assert store.claim("delivery:1", ttl=0.3)
    assert not store.claim("delivery:1", ttl=0.3)
    time.sleep(0.4)
    assert store.claim("delivery:1", ttl=0.3)


def test_put_extends_and_release_frees(store: Store) -> None:
    assert store.claim("k", ttl=0.2)
    store.put("k", ttl=60)
    time.sleep(0.3)
    assert store.exists("k") and not store.claim("k", ttl=1)
    store.release("k")
    assert not store.exists("k") and store.claim("k", ttl=1)


def test_racing_claims_have_exactly_one_winner(store: Store) -> None:
    wins: list[bool] = []
    start = threading.Barrier(8)

    def race() -> None:
        start.wait()
        wins.append(store.claim("lock:acme/charts#1", ttl=30))

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]


def test_a_lease_outlives_its_ttl_while_held_and_frees_on_release(store: Store) -> None:
    lease = Lease(store, "lock:acme/charts#2", ttl=0.3)
    assert lease.acquire()
    time.sleep(0.7)  # two renewals later, still held
    assert not Lease(store, "lock:acme/charts#2", ttl=0.3).acquire()
    lease.release()
    again = Lease(store, "lock:acme/charts#2", ttl=0.3)
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
