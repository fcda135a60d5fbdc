"""A real redis-server on a free loopback port, for tests of the Redis-backed queue and store."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from tests.support.app_harness import free_port


@contextmanager
def redis_server(workdir: Path) -> Iterator[str]:
    """Yields the server's URL; the server and its files go away afterwards."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed (.ci/run installs it)")
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(workdir),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _wait_ready(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _wait_ready(url: str, timeout: float = 10.0) -> None:
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer on {url}")
