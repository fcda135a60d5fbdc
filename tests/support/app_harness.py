"""The App under test, run for real: uvicorn on loopback, a huey consumer, PyGithub against the
fake GitHub. Deliveries are GitHub's official example payloads, retargeted and signed."""

from __future__ import annotations

import copy
import hashlib
import hmac
import itertools
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bot.app.settings import Settings
from bot.cli.serve import AppProcess, build
from tests.support.fakegithub import FakeGitHub
from webhooks.server import server_options

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "github" / "webhooks"
SECRET = "it's a secret to everybody"
_delivery_ids = itertools.count(1)


def example(name: str) -> dict[str, Any]:
    path = FIXTURES / f"{name}.json"
    if not path.exists():
        path = FIXTURES / "derived" / f"{name}.json"
    return json.loads(path.read_text())


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def retarget(payload: dict[str, Any], repo: str, clone_url: str, installation: int = 1) -> None:
    """Point an example delivery at a repository of the fake."""
    owner, name = repo.split("/")
    payload["repository"].update(full_name=repo, name=name, clone_url=clone_url)
    payload["repository"]["owner"]["login"] = owner
    payload["installation"] = {"id": installation, "node_id": "MDIz"}


def pull_request_event(
    action: str, repo: str, clone_url: str, number: int, head: str, base_ref: str = "develop"
) -> dict[str, Any]:
    name = "pull_request.edited" if action == "edited" else f"pull_request.{action}"
    payload = copy.deepcopy(example(name))
    retarget(payload, repo, clone_url)
    pr = payload["pull_request"]
    pr["number"] = payload["number"] = number
    pr["head"]["sha"] = head
    pr["base"]["ref"] = base_ref
    return payload


def comment_event(
    repo: str, clone_url: str, number: int, comment_id: int, body: str, user: str
) -> dict[str, Any]:
    payload = copy.deepcopy(example("issue_comment.created.pull_request"))
    retarget(payload, repo, clone_url)
    payload["issue"]["number"] = number
    payload["comment"].update(id=comment_id, body=body)
    payload["comment"]["user"].update(login=user, type="User")
    payload["sender"].update(login=user, type="User")
    return payload


def push_event(repo: str, clone_url: str, branch: str, after: str) -> dict[str, Any]:
    payload = copy.deepcopy(example("push"))
    retarget(payload, repo, clone_url)
    payload.update(ref=f"refs/heads/{branch}", after=after, created=False, deleted=False)
    return payload


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningApp:
    url: str
    process: AppProcess

    def deliver(
        self, event: str, payload: dict[str, Any], delivery: str | None = None
    ) -> httpx.Response:
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": delivery or f"delivery-{next(_delivery_ids)}",
            "X-Hub-Signature-256": sign(body),
            "Content-Type": "application/json",
        }
        return httpx.post(f"{self.url}/webhook", content=body, headers=headers, timeout=10)

    def idle(self) -> bool:
        """Nothing queued and nothing running. A job leaves the queue when a worker takes it, so
        the queue's depth alone reads idle while the job still logs and publishes."""
        return self.process.queue.depth() == 0 and self.process.queue.running() == 0


def app_settings(fake: FakeGitHub, data_dir: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(
        data_dir=data_dir,
        webhook_secret=SECRET.encode(),
        app_id=fake.app_id,
        private_key=fake.app_private_key,
        api_url=fake.url,
        seconds_between_requests=0.0,
        seconds_between_writes=0.0,
        github_retry_backoff=0.05,
        workers=2,
    )
    values.update(overrides)
    return Settings(**values)


@contextmanager
def running_app(settings: Settings, clock: Callable[[], float] = time.time) -> Iterator[RunningApp]:
    """`clock`: the store's (a ManualClock lets a test pass an hour of claims at once)."""
    process = build(settings, with_worker=True, clock=clock)
    # Bound here and handed to uvicorn: a port probed free and bound later can be taken in between
    # (by another test run, or any process's outgoing connection).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(process.app, **server_options())  # as `chart-review serve` runs it
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: server.started, timeout=10, what="uvicorn to start")
    process.start()
    try:
        yield RunningApp(url, process)
    finally:
        process.stop()
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def wait_for(condition: Callable[[], object], timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or condition}")
