"""Slow and large bodies against the real receiver: uvicorn on loopback as `serve` runs it, raw
sockets from distinct loopback addresses (each its own source), signed deliveries meanwhile.

Time is a clock the test moves (the receiver's body timer), so "a byte a second" costs no second:
nothing is cut unless the test advances it. What a body holds is read from the receiver's budget
once the bytes are in, never guessed from a sleep.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app.queue import HueyJobQueue
from bot.app.settings import MAX_BODY_BYTES, Settings
from tests.support.app_harness import SECRET, example, sign, wait_for
from tests.support.clock import ManualClock
from tests.support.logs import JsonLogs
from tests.support.servers import serve_app
from webhooks.app import create_app
from webhooks.budget import BodyBudget
from webhooks.caps import (
    BODIES_IN_FLIGHT,
    BODY_GRACE,
    MIN_BODY_RATE,
    SMALL_BODIES_RESERVED,
    SMALL_BODY_BYTES,
    SOURCE_BODIES,
)
from webhooks.server import server_options

HEAD = b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
GITHUB = "127.0.0.100"  # where the signed deliveries come from, unless a test says otherwise
BUDGET = BODIES_IN_FLIGHT * MAX_BODY_BYTES
LARGE_PART = BUDGET - int(BUDGET * SMALL_BODIES_RESERVED)


@dataclass
class Receiver:
    url: str
    port: int
    clock: ManualClock
    budget: BodyBudget
    queue: HueyJobQueue

    def metric(self, outcome: str) -> float:
        text = httpx.get(f"{self.url}/metrics", timeout=5).text
        line = f'chart_review_deliveries_total{{event="unverified",outcome="{outcome}"}} '
        found = [row for row in text.splitlines() if row.startswith(line)]
        return float(found[0].split()[-1]) if found else 0.0


@contextmanager
def running_receiver(tmp_path: Path, **settings: Any) -> Iterator[Receiver]:
    config = Settings(data_dir=tmp_path / "data", webhook_secret=SECRET.encode(), **settings)
    queue = HueyJobQueue.from_settings(config)
    clock = ManualClock()
    app = create_app(config, queue, timer=clock)
    with serve_app(app, server_options()) as url:
        port = int(url.rsplit(":", 1)[1])
        yield Receiver(url, port, clock, app.state.body_budget, queue)


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    with running_receiver(tmp_path) as running:
        yield running


def body_from(
    receiver: Receiver,
    declared: int,
    sent: bytes = b"",
    source: str = "127.0.0.1",
    forwarded: str | None = None,
    delivery: str | None = None,
) -> socket.socket:
    """A connection from `source` that declares a body of `declared` bytes and sends `sent`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect(("127.0.0.1", receiver.port))
    head = HEAD + b"Content-Length: %d\r\n" % declared
    if forwarded is not None:
        head += f"X-Forwarded-For: {forwarded}\r\n".encode()
    if delivery is not None:
        head += f"X-GitHub-Delivery: {delivery}\r\n".encode()
    sock.sendall(head + b"\r\n" + sent)
    return sock


def answer(sock: socket.socket) -> tuple[int, dict[str, Any]]:
    """The receiver's answer on `sock`, read until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)


_numbers = iter(range(1, 10**6))


def signed_delivery(
    receiver: Receiver, delivery: str, source: str = GITHUB, forwarded: str | None = None
) -> httpx.Response:
    payload = example("pull_request.opened")
    payload["number"] = next(_numbers)  # a body of its own: a replayed body is dropped
    body = json.dumps(payload, separators=(",", ":")).encode()
    assert len(body) <= SMALL_BODY_BYTES  # as every delivery of GitHub's is
    headers = {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body),
        "Content-Type": "application/json",
    }
    if forwarded is not None:
        headers["X-Forwarded-For"] = forwarded
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, timeout=10) as client:
        return client.post(f"{receiver.url}/webhook", content=body, headers=headers)


def held(receiver: Receiver, count: int, arriving: int) -> None:
    """Wait until the receiver has taken in `count` bytes of `arriving` bodies."""
    budget = receiver.budget
    wait_for(
        lambda: (budget.held, budget.bodies_arriving()) == (count, arriving),
        timeout=10,
        what=f"{count} bytes of {arriving} bodies in",
    )


def test_four_trickles_declaring_the_cap_leave_github_accepted_and_are_cut(
    receiver: Receiver, json_logs: JsonLogs
) -> None:
    """The red team's attack: four connections declare 5 MB each, the whole budget as it was
    reserved, and send a byte a second; from four addresses, so no source's cap is what helps."""
    sources = [f"127.0.0.{2 + n}" for n in range(4)]
    with ExitStack() as stack:
        trickles = [
            stack.enter_context(
                body_from(receiver, MAX_BODY_BYTES, b"{", source=source, delivery=f"trickle-{n}")
            )
            for n, source in enumerate(sources)
        ]
        wait_for(lambda: receiver.budget.bodies_arriving() == 4, what="the four bodies begun")
        accepted = [signed_delivery(receiver, f"github-{n}") for n in range(10)]
        assert [(r.status_code, r.json()) for r in accepted] == [(202, {"outcome": "queued"})] * 10
        assert receiver.queue.depth() == 10
        # They hold what they sent, 4 bytes, where what they declared is the whole budget.
        held(receiver, 4, arriving=4)
        assert 4 * MAX_BODY_BYTES == BUDGET

        receiver.clock.advance(1.0)  # a second later, a byte each: still on time
        for sock in trickles:
            sock.sendall(b" ")
        held(receiver, 8, arriving=4)
        receiver.clock.advance(1.0)  # and no third byte by the next second: under the rate
        answers = [answer(sock) for sock in trickles]

    reason = (
        f"body arriving at under {MIN_BODY_RATE} bytes a second after the first {BODY_GRACE:g} s:"
        f" 2 of {MAX_BODY_BYTES} bytes in 2.0 s"
    )
    assert answers == [(408, {"error": reason})] * 4
    assert (receiver.budget.held, receiver.budget.bodies_arriving()) == (0, 0)
    assert receiver.metric("too slow") == 4
    for n, source in enumerate(sources):
        (line,) = json_logs.about(f"trickle-{n}")
        assert (line["message"], line["source"]) == (f"delivery rejected (408): {reason}", source)


def test_one_source_has_at_most_its_bodies_arriving(
    receiver: Receiver, json_logs: JsonLogs
) -> None:
    attacker = "127.0.0.2"
    with ExitStack() as stack:
        for _ in range(SOURCE_BODIES):
            stack.enter_context(body_from(receiver, MAX_BODY_BYTES, b"{", source=attacker))
        held(receiver, SOURCE_BODIES, arriving=SOURCE_BODIES)
        with body_from(receiver, 1000, source=attacker, delivery="one-more") as one_more:
            refused = answer(one_more)
        from_github = signed_delivery(receiver, "github")
        from_attacker = signed_delivery(receiver, "same-source", source=attacker)

    reason = (
        f"{attacker} already has {SOURCE_BODIES} bodies arriving, the most one source may have "
        f"at once ({SOURCE_BODIES}); retry"
    )
    assert refused == (429, {"error": reason})
    assert (from_github.status_code, from_attacker.status_code) == (202, 429)
    assert receiver.metric("source busy") == 2
    (line,) = json_logs.about("one-more")
    assert (line["message"], line["source"]) == (f"delivery rejected (429): {reason}", attacker)


def test_one_source_holds_at_most_one_body_at_the_cap(receiver: Receiver) -> None:
    attacker, nearly = "127.0.0.3", MAX_BODY_BYTES - 1
    with body_from(receiver, MAX_BODY_BYTES, b"x" * nearly, source=attacker):
        held(receiver, nearly, arriving=1)
        with body_from(receiver, 1000, b"{}", source=attacker) as second:
            refused = answer(second)
        from_github = signed_delivery(receiver, "github")

    reason = (
        f"{attacker} would hold {MAX_BODY_BYTES + 1} bytes of bodies being received, over the "
        f"{MAX_BODY_BYTES}-byte share of one source; retry"
    )
    assert refused == (429, {"error": reason})
    assert from_github.status_code == 202


def test_large_bodies_leave_the_small_ones_their_part_of_the_budget(receiver: Receiver) -> None:
    """Four sources send all but the last byte of a body at the cap, fast, then nothing: they
    would fill the whole budget, but large bodies stop at their part of it."""
    nearly = b"x" * (MAX_BODY_BYTES - 1)
    fillers = [f"127.0.0.{10 + n}" for n in range(BODIES_IN_FLIGHT)]
    with ExitStack() as stack:
        for source in fillers[:-1]:
            stack.enter_context(body_from(receiver, MAX_BODY_BYTES, nearly, source=source))
        held(receiver, 3 * len(nearly), arriving=3)
        with body_from(receiver, MAX_BODY_BYTES, b"x" * 4, source=fillers[-1]) as last:
            refused = answer(last)
        accepted = [signed_delivery(receiver, f"github-{n}") for n in range(10)]

    reason = (
        f"bodies over {SMALL_BODY_BYTES} bytes would hold {3 * len(nearly) + 4} bytes, over the "
        f"{LARGE_PART} bytes they may fill of the receiver's budget; retry"
    )
    assert refused == (503, {"error": reason})
    assert [r.status_code for r in accepted] == [202] * 10
    assert receiver.metric("busy") == 1


def test_behind_a_trusted_proxy_each_client_it_names_is_a_source(tmp_path: Path) -> None:
    """As behind the chart's Ingress: every connection comes from the proxy (here 127.0.0.1),
    which appends the client's address to X-Forwarded-For."""
    proxy = (ipaddress.ip_network("127.0.0.0/8"),)
    attacker, github = "203.0.113.7", "140.82.115.10"
    with running_receiver(tmp_path, trusted_proxies=proxy) as receiver, ExitStack() as stack:
        for _ in range(SOURCE_BODIES):
            stack.enter_context(body_from(receiver, MAX_BODY_BYTES, b"{", forwarded=attacker))
        held(receiver, SOURCE_BODIES, arriving=SOURCE_BODIES)
        # What the client wrote itself comes first; the proxy's own entry is believed.
        forged = f"{github}, {attacker}"
        with body_from(receiver, 1000, forwarded=forged) as spoofing:
            refused = answer(spoofing)
        accepted = signed_delivery(receiver, "github", source="127.0.0.1", forwarded=github)

    assert refused[0] == 429 and refused[1]["error"].startswith(f"{attacker} already has ")
    assert accepted.status_code == 202


def test_without_trusted_proxies_a_forwarded_address_is_not_believed(receiver: Receiver) -> None:
    """The default: the peer is the source, whatever X-Forwarded-For says; so behind a proxy
    that is not trusted, every delivery is one source."""
    with ExitStack() as stack:
        for n in range(SOURCE_BODIES):
            forwarded = f"203.0.113.{n}"
            stack.enter_context(body_from(receiver, MAX_BODY_BYTES, b"{", forwarded=forwarded))
        held(receiver, SOURCE_BODIES, arriving=SOURCE_BODIES)
        refused = signed_delivery(receiver, "github", source="127.0.0.1", forwarded="140.82.115.10")

    assert refused.status_code == 429
    assert re.match(r"127\.0\.0\.1 already has \d+ bodies arriving", refused.json()["error"])


def test_bodies_being_received_hold_at_most_the_budget(tmp_path: Path) -> None:
    """Small bodies may fill the whole budget, by what has arrived; a cap of 1000 bytes makes it
    4000 bytes."""
    cap = 1000
    with running_receiver(tmp_path, max_body_bytes=cap) as receiver, ExitStack() as stack:
        for n in range(BODIES_IN_FLIGHT):
            source = f"127.0.0.{20 + n}"
            stack.enter_context(body_from(receiver, cap, b"x" * (cap - 1), source=source))
        held(receiver, BODIES_IN_FLIGHT * (cap - 1), arriving=BODIES_IN_FLIGHT)
        with body_from(receiver, cap, b"x" * 5, source="127.0.0.30") as one_more:
            refused = answer(one_more)

    total = BODIES_IN_FLIGHT * cap
    reason = (
        f"bodies being received would hold {total + 1} bytes, over the receiver's "
        f"{total}-byte budget; retry"
    )
    assert refused == (503, {"error": reason})
