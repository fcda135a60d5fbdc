"""The App as an operator runs it: `chart-review serve` and `chart-review worker` processes,
configured only through the environment, against the fake GitHub (and Redis when scaled out)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.app_harness import SECRET, sign, wait_for
from tests.support.fakegithub import FakeGitHub


def app_env(github: FakeGitHub, data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_APP_ID": str(github.app_id),
        "GITHUB_PRIVATE_KEY": github.app_private_key,
        "GITHUB_API_URL": github.url,
        "GITHUB_SECONDS_BETWEEN_REQUESTS": "0",
        "GITHUB_SECONDS_BETWEEN_WRITES": "0",
        # A killed worker's job is taken back once its heartbeat lapses: 5 s, not 15, to wait on.
        "JOB_HEARTBEAT_SECONDS": "5",
        **extra,
    }


@contextmanager
def process(
    *args: str, env: dict[str, str], log: Path, pass_fds: tuple[int, ...] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """`chart-review ARGS` with its output in `log`; interrupted (graceful stop) on the way out."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "bot.cli", *args],
            env=env,
            stdout=out,
            stderr=out,
            pass_fds=pass_fds,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def json_lines(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(errors="replace").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


@dataclass
class Cluster:
    url: str
    env: dict[str, str]
    logs: Path
    stack: ExitStack
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def add_worker(self) -> subprocess.Popen[bytes]:
        log = self.logs / f"worker-{len(self.workers)}.log"
        proc = self.stack.enter_context(process("worker", env=self.env, log=log))
        self.workers.append(proc)
        return proc

    def deliver(self, event: str, payload: dict[str, Any], delivery: str) -> httpx.Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(body),
            "Content-Type": "application/json",
        }
        return httpx.post(f"{self.url}/webhook", content=body, headers=headers, timeout=10)

    def worker_logs(self) -> list[dict[str, Any]]:
        return [
            line for path in sorted(self.logs.glob("worker-*.log")) for line in json_lines(path)
        ]


def listening_socket() -> socket.socket:
    """A loopback socket bound and listening, for `serve --fd`: a port probed free and bound later
    by serve could be taken in between, by another test run's serve, which would then receive this
    run's deliveries. Close it when done; a serve restarted on it keeps the same address."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    return listener


@contextmanager
def cluster(env: dict[str, str], logs: Path, workers: int) -> Iterator[Cluster]:
    """`serve --no-worker` and `workers` worker processes sharing the queue named by `env`."""
    logs.mkdir(parents=True, exist_ok=True)
    listener = listening_socket()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    with ExitStack() as stack:
        stack.callback(listener.close)
        serve = ("serve", "--fd", str(listener.fileno()), "--no-worker")
        fds = (listener.fileno(),)
        stack.enter_context(process(*serve, env=env, log=logs / "serve.log", pass_fds=fds))
        wait_for(lambda: healthy(url), timeout=30, what="serve to answer /healthz")
        running = Cluster(url, env, logs, stack)
        for _ in range(workers):
            running.add_worker()
        yield running
