"""What an unsigned sender can make the receiver hold: a real `chart-review serve --no-worker`
process on loopback, hostile raw sockets, its memory read from /proc.

Stalled heads, bodies declared past the cap and bodies that stop halfway are all closed by the
server within seconds, the process grows by a few MB at most, and a signed delivery sent meanwhile
is acknowledged at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from bot.app.settings import MAX_BODY_BYTES
from tests.support.app_harness import SECRET, example, sign, wait_for
from tests.support.cluster import healthy, listening_socket, process
from webhooks.caps import BODY_GRACE, HEADER_TIMEOUT, MAX_CONNECTIONS

STALLED, OVERSIZED, SLOW_BODIES = 50, 30, 10
DECLARED = 26_000_000  # past GitHub's own 25 MB
SENT = 4 * 2**20  # what each oversized sender tries to push before giving up: 120 MB in all
CLOSE_WITHIN = 15.0
MAX_GROWTH_MB = 50.0
ACK_WITHIN = 1.0
GROUPS = ("stalled", "oversized", "slow body")
HEAD = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


@dataclass
class Server:
    url: str
    port: int
    pid: int

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        return int(line.split()[1]) / 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("limits")
    env = {
        **{name: value for name, value in os.environ.items() if name != "REDIS_URL"},
        "DATA_DIR": str(root / "data"),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        # `serve --no-worker` never calls GitHub: the App's id and key are only required to be set.
        "GITHUB_APP_ID": "1",
        "GITHUB_PRIVATE_KEY": "not used by a receiver without a worker",
        "LOG_LEVEL": "WARNING",
    }
    listener = listening_socket()
    port = listener.getsockname()[1]
    serve = ("serve", "--fd", str(listener.fileno()), "--no-worker")
    fds = (listener.fileno(),)
    with listener, process(*serve, env=env, log=root / "serve.log", pass_fds=fds) as p:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: healthy(url) or p.poll() is not None, timeout=30, what="serve to start")
        assert p.poll() is None, (root / "serve.log").read_text()
        yield Server(url, port, p.pid)


def signed_delivery(url: str, delivery: str, number: int) -> httpx.Response:
    payload = example("pull_request.opened")
    payload["number"] = number  # a body of its own: a replayed body is dropped
    body = json.dumps(payload, separators=(",", ":")).encode()
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body),
        "Content-Type": "application/json",
    }
    return httpx.post(f"{url}/webhook", content=body, headers=headers, timeout=5)


def connect(server: Server, data: bytes, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), 2, source_address=(source, 0))
    # The server may refuse and close (or stop reading) before all of it is written.
    with contextlib.suppress(OSError):
        sock.sendall(data)
    return sock


@dataclass
class Hostile:
    group: str
    sock: socket.socket
    opened: float
    answer: bytes = b""
    closed_after: float | None = None
    reset: bool = False


@dataclass
class Watch:
    """Every hostile socket until the server has closed it, and the server's peak memory."""

    server: Server
    sockets: list[Hostile] = field(default_factory=list)
    peak_mb: float = 0.0

    def until_closed(self, deadline: float) -> None:
        with selectors.DefaultSelector() as selector:
            for hostile in self.sockets:
                hostile.sock.setblocking(False)
                selector.register(hostile.sock, selectors.EVENT_READ, hostile)
            while selector.get_map() and time.monotonic() < deadline:
                self.peak_mb = max(self.peak_mb, self.server.rss_mb())
                for key, _ in selector.select(timeout=0.1):
                    if self.read(key.data):
                        selector.unregister(key.fileobj)

    def read(self, hostile: Hostile) -> bool:
        """True once the server has closed `hostile`."""
        try:
            chunk = hostile.sock.recv(65536)
        except BlockingIOError:
            return False
        except ConnectionResetError:
            chunk, hostile.reset = b"", True
        if chunk:
            hostile.answer += chunk
            return False
        hostile.closed_after = time.monotonic() - hostile.opened
        return True

    def close(self) -> None:
        for hostile in self.sockets:
            hostile.sock.close()


def hostile_source(n: int) -> str:
    return f"127.0.1.{n + 1}"


def status_of(hostile: Hostile) -> int | None:
    return int(hostile.answer.split(b" ")[1]) if hostile.answer.startswith(b"HTTP/1.1 ") else None


def test_hostile_connections_are_closed_and_cost_little_while_github_is_answered(
    server: Server,
) -> None:
    assert signed_delivery(server.url, "warm-up", 1).status_code == 202
    baseline = server.rss_mb()
    watch = Watch(server)
    try:
        # Each from an address of its own (127.0.1.N), so that no one source's caps decide.
        for n in range(STALLED):  # half a header line, then nothing
            sock = connect(server, HEAD + b"X-GitHub-Event: pull_re", hostile_source(n))
            watch.sockets.append(Hostile("stalled", sock, time.monotonic()))
        for n in range(OVERSIZED):  # a body declared past the cap, and as much of it as goes
            head = HEAD + b"Content-Length: %d\r\n\r\n" % DECLARED
            sock = connect(server, head + b"x" * SENT, hostile_source(STALLED + n))
            watch.sockets.append(Hostile("oversized", sock, time.monotonic()))
        for n in range(SLOW_BODIES):  # a body under the cap that stops a tenth of the way in
            head = HEAD + b"Content-Length: 4000\r\n\r\n"
            source = hostile_source(STALLED + OVERSIZED + n)
            sock = connect(server, head + b"{" + b" " * 399, source)
            watch.sockets.append(Hostile("slow body", sock, time.monotonic()))

        started = time.monotonic()
        acknowledged = signed_delivery(server.url, "meanwhile", 2)
        latency = time.monotonic() - started

        watch.until_closed(deadline=watch.sockets[0].opened + CLOSE_WITHIN)
    finally:
        watch.close()

    assert (acknowledged.status_code, acknowledged.json()) == (202, {"outcome": "queued"})
    assert latency < ACK_WITHIN
    open_still = [h.group for h in watch.sockets if h.closed_after is None]
    assert open_still == [], f"{len(open_still)} hostile connections still open"
    growth = watch.peak_mb - baseline
    assert growth < MAX_GROWTH_MB, f"the receiver grew by {growth:.0f} MB"

    closing = {g: max(h.closed_after or 0 for h in watch.sockets if h.group == g) for g in GROUPS}
    print(
        f"\nRSS {baseline:.1f} MB, peak {watch.peak_mb:.1f} MB (+{growth:.1f}); ack {latency:.3f} s;"
        f" last closed (s): {', '.join(f'{g} {t:.2f}' for g, t in closing.items())}"
    )
    assert closing["stalled"] >= HEADER_TIMEOUT - 0.5  # closed by the deadline, not by accident
    assert closing["oversized"] < 2.0  # refused from the header, without reading the body
    # Cut for falling behind the minimum rate once the first second is out.
    assert BODY_GRACE - 0.5 <= closing["slow body"] < CLOSE_WITHIN
    assert {status_of(h) for h in watch.sockets if h.group == "stalled"} == {408}
    assert {status_of(h) for h in watch.sockets if h.group == "slow body"} == {408}
    # A refusal closes with the rest of our body unread, which the kernel may turn into a reset
    # that loses the answer (see test_webhook_fuzz.raw_request).
    assert {status_of(h) for h in watch.sockets if h.group == "oversized"} <= {413, None}


def test_declared_length_over_the_cap_is_refused_naming_the_cap(server: Server) -> None:
    with connect(server, HEAD + b"Content-Length: %d\r\n\r\n" % (MAX_BODY_BYTES + 1)) as sock:
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 413 ")
    error = f"body of {MAX_BODY_BYTES + 1} bytes is over the {MAX_BODY_BYTES}-byte limit"
    assert answer.endswith(json.dumps({"error": error}, separators=(",", ":")).encode())


@pytest.mark.parametrize(
    ("head", "error"),
    [
        (b"Transfer-Encoding: chunked\r\n", "a chunked body is refused; send Content-Length"),
        (b"", "a POST needs a Content-Length header"),
    ],
)
def test_a_body_without_a_declared_length_is_refused(
    server: Server, head: bytes, error: str
) -> None:
    with connect(server, HEAD + head + b"\r\n") as sock:
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 411 ")
    assert answer.endswith(json.dumps({"error": error}, separators=(",", ":")).encode())


def test_a_keep_alive_connection_that_stalls_in_its_second_head_is_closed(server: Server) -> None:
    """The head deadline starts again after each response, not only when the connection opens."""
    get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connect(server, get + b"GET /healthz HTTP/1.1\r\nHo") as sock:
        started = time.monotonic()
        answer = read_until_closed(sock, timeout=CLOSE_WITHIN)
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 200 ") and b"HTTP/1.1 408 " in answer
    assert HEADER_TIMEOUT - 0.5 <= elapsed < HEADER_TIMEOUT + 2


def read_until_closed(sock: socket.socket, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
    return data


def test_connections_past_the_limit_are_refused_at_once(server: Server) -> None:
    idle = [connect(server, b"") for _ in range(MAX_CONNECTIONS)]
    try:
        wait_for(lambda: healthy(server.url) is False, timeout=5, what="the limit to be reached")
        with connect(server, b"") as over:
            assert read_until_closed(over).startswith(b"HTTP/1.1 503 ")
    finally:
        for sock in idle:
            sock.close()
    wait_for(lambda: healthy(server.url), timeout=CLOSE_WITHIN, what="the receiver to recover")
    assert signed_delivery(server.url, "after the crowd", 3).status_code == 202
