"""The Action against a GitHub Enterprise Server: its REST API lives under `https://HOST/api/v3`,
not at api.github.com. A loopback proxy serves the fake GitHub under that prefix, so every call
the Action makes must go to GITHUB_API_URL's host and path for the review to publish at all."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli.test_action import _run
from tests.support.action_job import as_actions, runner_env
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.fakegithub import FakeGitHub

PREFIX = "/api/v3"
HOP_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})


class _Prefixed(ThreadingHTTPServer):
    upstream: str
    seen: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: _Prefixed

    def _forward(self) -> None:
        if not self.path.startswith(PREFIX + "/"):
            self.send_error(404, "not under " + PREFIX)
            return
        self.server.seen.append(f"{self.command} {self.path}")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
        url = self.server.upstream + self.path[len(PREFIX) :]
        request = urllib.request.Request(url, body, headers, method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, data, reply = answer.status, answer.read(), answer.headers
        except urllib.error.HTTPError as exc:
            status, data, reply = exc.code, exc.read(), exc.headers
        # The URLs in its answers are the server's own, under the prefix, as GHES writes them.
        ours = f"http://{self.headers['Host']}{PREFIX}"
        data = data.replace(self.server.upstream.encode(), ours.encode())
        self.send_response(status)
        for key, value in reply.items():
            if key.lower() not in HOP_HEADERS:
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _forward

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def enterprise(github: FakeGitHub) -> Iterator[_Prefixed]:
    server = _Prefixed(("127.0.0.1", 0), _Handler)
    server.upstream, server.seen = github.url, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_the_action_publishes_through_an_enterprise_api_url(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario, enterprise: _Prefixed
) -> None:
    as_actions(github)
    api_url = f"http://127.0.0.1:{enterprise.server_address[1]}{PREFIX}"
    done = _run(runner_env(tmp_path, github, scenario, GITHUB_API_URL=api_url))

    assert done.code == 1, done.stderr
    assert sorted(r.name for r in github.check_runs(REPO, scenario.head)) == sorted(RUNS)
    assert len(github.issue_comments(REPO, 1)) == 1
    assert f"POST {PREFIX}/repos/{REPO}/check-runs" in enterprise.seen
    # Every request the fake answered came through the enterprise URL.
    assert len(github.calls()) == len(enterprise.seen)


def test_a_rerun_on_an_enterprise_server_edits_its_runs(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario, enterprise: _Prefixed
) -> None:
    """An Enterprise Server's GitHub Actions app has an id of its own, not github.com's: the
    Action knows its runs by the app's slug there, so a re-run edits them, never adds more."""
    as_actions(github)
    with github.state.lock:
        github.state.app_id = 31  # what this server numbered its Actions app
    api_url = f"http://127.0.0.1:{enterprise.server_address[1]}{PREFIX}"
    env = runner_env(tmp_path, github, scenario, GITHUB_API_URL=api_url)
    assert _run(env).code == 1
    first = sorted((r.name, r.id) for r in github.check_runs(REPO, scenario.head))
    assert _run(runner_env(tmp_path / "again", github, scenario, GITHUB_API_URL=api_url)).code == 1
    assert sorted((r.name, r.id) for r in github.check_runs(REPO, scenario.head)) == first
    assert len(github.issue_comments(REPO, 1)) == 1
