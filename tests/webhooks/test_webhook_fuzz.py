"""Hostile input against the real receiver (uvicorn on loopback, a SqliteHuey queue in tmp_path).

Whatever arrives, the answer is a 2xx or a 4xx, never a 5xx; a 4xx says why under `error`; a
refused delivery (400, 401, 405, 413) queues nothing; a 202 that queued a job queued a well-typed
one; and the server still answers /healthz afterwards.
"""

from __future__ import annotations

import copy
import json
import select
import socket
import types
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import httpx
import hypothesis
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bot.app.jobspec import Job, job_from_dict, job_to_dict
from bot.app.queue import HueyJobQueue
from bot.app.settings import Settings
from tests.support.paths import WEBHOOKS
from tests.support.servers import serve_app
from webhooks.app import create_app
from webhooks.signature import sign

SECRET = b"fuzzing-secret"
CAP = 64 * 1024
REFUSED = {400, 401, 405, 413}
# uvicorn's own answer (h11) to a request it cannot parse, before the app sees it: plain text.
UNPARSABLE = (400, "Invalid HTTP request received.")
PIECE = 4096

FUZZ = settings(
    max_examples=60,
    deadline=2000,
    database=None,  # no saved examples between runs; a failure prints its reproduction blob
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)


def example_payload(name: str, **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((WEBHOOKS / name).read_text())
    return payload | changes


def _comment(action: str) -> dict[str, Any]:
    payload = example_payload("derived/issue_comment.created.pull_request.json", action=action)
    payload["comment"]["body"] = "/chart-review"
    payload["changes"] = {"body": {"from": "/chart-reveiw"}}
    return payload


def _base_changed() -> dict[str, Any]:
    payload = example_payload("derived/pull_request.edited.json")
    payload["changes"]["base"] = {"ref": {"from": "develop"}}
    return payload


# Deliveries that each queue a job (or are answered) as they stand, so a mutation that leaves
# them routable reaches the code that builds the job.
BASES: list[tuple[str, dict[str, Any]]] = [
    ("pull_request", example_payload("pull_request.opened.json")),
    ("pull_request", example_payload("pull_request.synchronize.json")),
    ("pull_request", example_payload("pull_request.closed.json")),
    ("pull_request", _base_changed()),
    ("issue_comment", _comment("created")),
    ("issue_comment", _comment("edited")),
    ("check_run", example_payload("check_run.rerequested.json")),
    ("check_run", example_payload("check_run.requested_action.json", action="rerequested")),
    ("check_suite", example_payload("check_suite.rerequested.json")),
    ("push", example_payload("push.json", deleted=False)),
    ("installation", example_payload("installation.created.json")),
    ("ping", example_payload("ping.json")),
]
EVENTS = sorted({event for event, _ in BASES}) + ["pull_request_review_comment", "star", ""]
# Where the routes look; mutations are drawn from these paths half the time.
ROUTED = (
    "action", "repository", "installation", "pull_request", "issue", "comment", "changes",
    "sender", "ref", "deleted", "check_run.head_sha", "check_run.pull_requests",
    "check_suite.head_sha", "check_suite.pull_requests",
)  # fmt: skip

Path_ = tuple[str | int, ...]


def paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        yield prefix + (key,)
        yield from paths(child, prefix + (key,))


def routed(path: Path_) -> bool:
    dotted = ".".join(map(str, path))
    return len(path) <= 4 and any(dotted.startswith(p) for p in ROUTED)


json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
replacement = st.one_of(
    json_leaf,
    st.lists(json_leaf, max_size=3),
    st.dictionaries(st.text(max_size=8), json_leaf, max_size=3),
    st.sampled_from(["", "2", "/chart-review", "refs/tags/v1", "edited", "closed", "Bot"]),
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """An example delivery with one to three fields deleted or retyped."""
    event, base = draw(st.sampled_from(BASES))
    payload = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        every = list(paths(payload))
        if not every:
            break
        near = [p for p in every if routed(p)]
        nearby = bool(near) and draw(st.booleans())
        path = draw(st.sampled_from(near if nearby else every))
        holder: Any = payload
        for key in path[:-1]:
            holder = holder[key]
        if draw(st.booleans()):
            del holder[path[-1]]
        else:
            holder[path[-1]] = draw(replacement)
    if draw(st.integers(0, 9)) == 0:
        event = draw(st.sampled_from(EVENTS))  # the header and the body disagree
    return event, payload


def well_typed(value: Any, hint: Any) -> bool:
    """`value` is what the annotation `hint` says: a bool is no int, a sha no number."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(well_typed(value, arg) for arg in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if hint is type(None):
        return value is None
    if isinstance(hint, type) and is_dataclass(hint):
        hints = get_type_hints(hint)
        return isinstance(value, hint) and all(
            well_typed(getattr(value, f.name), hints[f.name]) for f in fields(hint)
        )
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory) -> HueyJobQueue:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    return HueyJobQueue.from_settings(Settings(data_dir=data, webhook_secret=SECRET))


@pytest.fixture(scope="module")
def client(queue: HueyJobQueue) -> Iterator[httpx.Client]:
    app_settings = Settings(data_dir=Path("unused"), webhook_secret=SECRET, max_body_bytes=CAP)
    with serve_app(create_app(app_settings, queue)) as url, httpx.Client(base_url=url) as client:
        yield client
        assert client.get("/healthz").status_code == 200, "the receiver survived the fuzzing"


def signed(body: bytes, event: str | None = "pull_request", **extra: str) -> dict[str, str]:
    sent = {"X-Hub-Signature-256": sign(SECRET, body), "X-GitHub-Delivery": uuid.uuid4().hex}
    return sent | ({"X-GitHub-Event": event} if event is not None else {}) | extra


def signed_bytes(body: bytes) -> dict[bytes, bytes]:
    return {name.encode(): value.encode() for name, value in signed(body).items()}


def exchange(
    client: httpx.Client,
    queue: HueyJobQueue,
    body: bytes,
    headers: Mapping[str, str] | Mapping[bytes, bytes],
    method: str = "POST",
) -> httpx.Response:
    """Send one request and check what every answer must satisfy."""
    queue.huey.flush()
    response = client.request(method, "/webhook", content=body, headers=headers)
    status = response.status_code
    assert 200 <= status < 300 or 400 <= status < 500, (status, response.text)
    if 400 <= status < 500 and method != "HEAD":
        error = response.json()["error"]
        assert isinstance(error, str) and error, response.text
    if status in REFUSED:
        assert queue.depth() == 0, f"{status} {response.text} yet a job was queued"
    return response


def queued_job(queue: HueyJobQueue) -> Job:
    [(data,)] = [task.args for task in queue.huey.pending()]
    job = job_from_dict(data)
    assert job_from_dict(json.loads(json.dumps(job_to_dict(job)))) == job, "JSON-safe"
    return job


@settings(FUZZ, max_examples=300)
@given(delivery=mutated())
@example(delivery=("pull_request", example_payload("pull_request.opened.json", number=True)))
def test_signed_payloads_with_missing_or_mistyped_fields(
    client: httpx.Client, queue: HueyJobQueue, delivery: tuple[str, dict[str, Any]]
) -> None:
    event, payload = delivery
    body = json.dumps(payload, separators=(",", ":")).encode()
    response = exchange(client, queue, body, signed(body, event))
    outcome = response.json().get("outcome", "")
    hypothesis.event(f"{response.status_code} {outcome or response.json()['error'][:40]}")
    if response.status_code == 202 and outcome == "queued":
        job = queued_job(queue)
        assert well_typed(job, type(job)), job
    else:
        assert queue.depth() == 0, outcome
    assert response.status_code in {200, 202, 400}, response.text


header_text = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=60
).map(str.strip)  # HTTP drops a value's surrounding whitespace; h11 refuses to send it


@st.composite
def garbled(draw: st.DrawFn) -> tuple[bytes, dict[bytes, bytes]]:
    """A body that is not a JSON object GitHub would send, signed or not, under any headers."""
    good = json.dumps(draw(st.sampled_from(BASES))[1], separators=(",", ":")).encode()
    kind = draw(st.sampled_from(["truncated", "not utf-8", "bytes", "json"]))
    if kind == "truncated":
        body = good[: draw(st.integers(0, len(good) - 1))]
    elif kind == "not utf-8":
        at = draw(st.integers(0, len(good) - 1))
        body = good[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + good[at:]
    elif kind == "bytes":
        body = draw(st.binary(max_size=200))
    else:
        body = json.dumps(draw(replacement)).encode()
    headers = signed(body, draw(st.sampled_from(EVENTS)))
    for name in ("X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery"):
        choice = draw(st.sampled_from(["keep", "drop", "garble"]))
        if choice == "drop":
            del headers[name]
        elif choice == "garble":
            headers[name] = draw(header_text)
    content_type = st.sampled_from(["application/json", "application/x-www-form-urlencoded"])
    headers["Content-Type"] = draw(content_type | header_text)
    return body, {name.encode(): value.encode("latin-1") for name, value in headers.items()}


@FUZZ
@given(request=garbled())
@example(request=(b"1" * 5000, signed_bytes(b"1" * 5000)))  # over Python's int-conversion limit
@example(request=(b'{"a":' + b"9" * 4301 + b"}", signed_bytes(b'{"a":' + b"9" * 4301 + b"}")))
def test_garbled_bodies_and_headers(
    client: httpx.Client, queue: HueyJobQueue, request: tuple[bytes, dict[bytes, bytes]]
) -> None:
    body, headers = request
    response = exchange(client, queue, body, headers)
    if headers.get(b"X-Hub-Signature-256") != sign(SECRET, body).encode():
        assert response.status_code == 401, "a body without its signature was read"


@FUZZ
@given(
    method=st.sampled_from(["GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
    body=st.binary(max_size=100),
)
def test_other_methods_are_refused(
    client: httpx.Client, queue: HueyJobQueue, method: str, body: bytes
) -> None:
    response = exchange(client, queue, body, signed(body), method)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    if method != "HEAD":
        assert response.json() == {"error": "Method Not Allowed"}


# What raw_request returns when the server refused by closing with our bytes still unread: the
# kernel then resets the connection, and the answer it had sent is lost.
RESET = (0, "connection reset")


def raw_request(client: httpx.Client, request: bytes) -> tuple[int, str]:
    """Send request bytes a piece at a time on a fresh socket, as a slow client would, stopping
    once the server has answered; (status, body) of the answer, or RESET. A server that refuses
    closes at once: if a piece it has not read is in its buffer by then (however soon we stop
    sending), its close is a reset that loses the answer, so a refusal may end either way."""
    url = client.base_url
    data = b""
    with socket.create_connection((url.host, url.port or 80), timeout=5) as conn:
        # poll, not select: select() refuses a descriptor numbered past 1023.
        answered = select.poll()
        answered.register(conn, select.POLLIN)
        try:
            for at in range(0, len(request), PIECE):
                if answered.poll(1):
                    break
                conn.sendall(request[at : at + PIECE])
            while chunk := conn.recv(65536):
                data += chunk
        except (ConnectionResetError, BrokenPipeError):
            return RESET
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body.decode(errors="replace")


@settings(FUZZ, max_examples=10)
@given(size=st.integers(17 * 1024, 512 * 1024), many=st.booleans())
def test_huge_headers_are_refused_or_read(
    client: httpx.Client, queue: HueyJobQueue, size: int, many: bool
) -> None:
    # A body of its own per case: the receiver drops a body it has already queued.
    payload = {**example_payload("push.json"), "padding": f"{size}-{many}"}
    body = json.dumps(payload).encode()
    head = b"POST /webhook HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    for name, value in signed(body, "push").items():
        head += f"{name}: {value}\r\n".encode()
    if many:
        head += b"".join(b"X-Pad-%d: y\r\n" % i for i in range(size // 12))
    else:
        head += b"X-Pad: " + b"y" * size + b"\r\n"
    head += b"Content-Length: %d\r\n\r\n" % len(body)
    queue.huey.flush()
    status, text = raw_request(client, head + body)
    # h11 refuses a header block still incomplete past 16 KB; one that arrives whole in a single
    # read is parsed, and then it is an ordinary signed delivery.
    if (status, text) not in (UNPARSABLE, RESET):
        assert (status, json.loads(text)) == (202, {"outcome": "queued"})
    assert queue.depth() == (1 if status == 202 else 0)


def test_a_number_too_long_for_python_is_a_bad_request(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    body = b'{"action":' + b"1" * 5000 + b"}"
    response = exchange(client, queue, body, signed(body))
    assert (response.status_code, response.json()) == (
        400,
        {
            "error": "body is not JSON: Exceeds the limit (4300 digits) for integer string conversion"
        },
    )


def test_unknown_paths_say_why(client: httpx.Client) -> None:
    response = client.post("/hooks", content=b"{}")
    assert (response.status_code, response.json()) == (404, {"error": "Not Found"})
