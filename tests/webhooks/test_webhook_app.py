"""The receiver for real: uvicorn on loopback, a SqliteHuey queue in tmp_path, signed HTTP."""

import io
import json
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bot.app.jobspec import RepoRef, ReviewJob, job_from_dict
from bot.app.logs import configure_logging
from bot.app.queue import HueyJobQueue
from bot.app.settings import Settings, SettingsError
from tests.support.paths import WEBHOOKS
from tests.support.servers import serve_app
from webhooks.app import create_app
from webhooks.signature import sign

SECRET = b"webhook-secret-that-must-never-be-logged"
CAP = 64 * 1024  # the example payloads are ~20 KB compact
HEAD = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
HELLO = RepoRef("Codertocat/Hello-World", 1, "https://github.com/Codertocat/Hello-World.git")


def compact(name: str) -> bytes:
    """An example payload as GitHub sends it: compact JSON."""
    payload = json.loads((WEBHOOKS / name).read_text())
    return json.dumps(payload, separators=(",", ":")).encode()


def headers(body: bytes, event: str | None, delivery: str | None, **extra: str) -> dict[str, str]:
    sent = {"Content-Type": "application/json", "X-Hub-Signature-256": sign(SECRET, body)}
    sent |= {"X-GitHub-Event": event} if event else {}
    sent |= {"X-GitHub-Delivery": delivery} if delivery else {}
    return sent | extra


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", webhook_secret=SECRET, max_body_bytes=CAP)


@pytest.fixture
def queue(settings: Settings) -> HueyJobQueue:
    return HueyJobQueue.from_settings(settings)


@pytest.fixture
def client(settings: Settings, queue: HueyJobQueue) -> Iterator[httpx.Client]:
    with serve_app(create_app(settings, queue)) as url, httpx.Client(base_url=url) as client:
        yield client


def deliver(
    client: httpx.Client,
    body: bytes,
    event: str | None = "pull_request",
    delivery: str | None = "delivery-1",
    **extra: str,
) -> httpx.Response:
    return client.post("/webhook", content=body, headers=headers(body, event, delivery, **extra))


def test_signed_delivery_is_queued_before_the_answer(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    started = time.monotonic()
    response = deliver(client, compact("pull_request.opened.json"))
    assert time.monotonic() - started < 1.0
    assert (response.status_code, response.json()) == (202, {"outcome": "queued"})
    job = ReviewJob(HELLO, 2, HEAD, "pull_request.opened", "delivery-1")
    [(queued,)] = [task.args for task in queue.huey.pending()]
    assert job_from_dict(queued) == job and queued["id"]  # plus the queue's own run id


def test_redelivery_is_acknowledged_once(client: httpx.Client, queue: HueyJobQueue) -> None:
    body = compact("pull_request.synchronize.json")
    assert deliver(client, body).status_code == 202
    second = deliver(client, body)
    assert (second.status_code, second.json()) == (200, {"outcome": "duplicate delivery"})
    assert queue.depth() == 1


@pytest.mark.parametrize(
    ("signature", "error"),
    [
        (None, "missing X-Hub-Signature-256 header"),
        ("sha256=" + "0" * 64, "X-Hub-Signature-256 does not match the body"),
        (sign(b"another secret", b"{}"), "X-Hub-Signature-256 does not match the body"),
    ],
)
def test_unsigned_or_missigned_delivery_is_refused(
    client: httpx.Client, queue: HueyJobQueue, signature: str | None, error: str
) -> None:
    body = compact("pull_request.opened.json")
    sent = headers(body, "pull_request", "delivery-1")
    del sent["X-Hub-Signature-256"]
    sent |= {"X-Hub-Signature-256": signature} if signature else {}
    response = client.post("/webhook", content=body, headers=sent)
    assert (response.status_code, response.json()) == (401, {"error": error})
    assert queue.depth() == 0


def test_body_over_the_cap_is_refused(client: httpx.Client, queue: HueyJobQueue) -> None:
    body = json.dumps({"padding": "x" * CAP}).encode()
    response = deliver(client, body)
    assert response.status_code == 413
    assert response.json() == {"error": f"body of {len(body)} bytes is over the 65536-byte limit"}
    assert queue.depth() == 0


def test_a_chunked_body_is_refused_before_it_is_read(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    # GitHub always sends Content-Length; a body without one could only be held unverified.
    body = json.dumps({"padding": "x" * 2 * CAP}).encode()
    chunks = (body[i : i + 4096] for i in range(0, len(body), 4096))  # no Content-Length
    response = client.post("/webhook", content=chunks, headers=headers(body, "push", "d-1"))
    assert response.status_code == 411
    assert response.json() == {"error": "a chunked body is refused; send Content-Length"}
    assert queue.depth() == 0


def test_declared_length_over_the_cap_is_refused_before_reading(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    # Only the headers are sent: the answer must come without waiting for a gigabyte of body.
    host, port = client.base_url.host, client.base_url.port
    with socket.create_connection((host, port or 80), timeout=5) as conn:
        conn.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000000000\r\nX-GitHub-Event: push\r\n\r\n"
        )
        answer = read_response(conn)
    assert answer.startswith("HTTP/1.1 413 ")
    assert '{"error":"body of 1000000000 bytes is over the 65536-byte limit"}' in answer
    assert queue.depth() == 0


def read_response(conn: socket.socket) -> str:
    """One HTTP/1.1 response with a Content-Length body, read off a raw socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += recv(conn)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += recv(conn)
    return (head + b"\r\n\r\n" + body).decode()


def recv(conn: socket.socket) -> bytes:
    chunk = conn.recv(65536)
    if not chunk:
        raise ConnectionError("server closed the connection mid-response")
    return chunk


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            b'{"action": "opened",',
            "body is not JSON (Expecting property name enclosed in double quotes at line 1 column 21); set the webhook's content type to application/json",
        ),
        (
            b"payload=%7B%7D",
            "body is not JSON (Expecting value at line 1 column 1); set the webhook's content type to application/json",
        ),
        (b"[1, 2]", "body is not a JSON object"),
        (b'"\xff\xfe"', "body is not UTF-8"),
    ],
)
def test_body_that_is_not_a_json_object_is_refused(
    client: httpx.Client, queue: HueyJobQueue, body: bytes, error: str
) -> None:
    response = deliver(client, body)
    assert (response.status_code, response.json()) == (400, {"error": error})
    assert queue.depth() == 0


@pytest.mark.parametrize(
    ("event", "delivery", "error"),
    [
        (None, "delivery-1", "missing X-GitHub-Event header"),
        ("pull_request", None, "missing X-GitHub-Delivery header"),
        ("pull_request", "x" * 101, "X-GitHub-Delivery is not a delivery id"),
    ],
)
def test_missing_github_headers_are_refused(
    client: httpx.Client, queue: HueyJobQueue, event: str | None, delivery: str | None, error: str
) -> None:
    response = deliver(client, compact("pull_request.opened.json"), event, delivery)
    assert (response.status_code, response.json()) == (400, {"error": error})
    assert queue.depth() == 0


def test_payload_missing_a_field_is_refused_naming_it(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    payload = json.loads(compact("pull_request.opened.json"))
    del payload["pull_request"]["head"]["sha"]
    response = deliver(client, json.dumps(payload).encode())
    assert response.status_code == 400
    assert response.json() == {"error": "pull_request payload: pull_request.head.sha: missing"}
    assert queue.depth() == 0


def test_ping_is_answered(client: httpx.Client, queue: HueyJobQueue) -> None:
    response = deliver(client, compact("ping.json"), "ping")
    assert (response.status_code, response.json()) == (200, {"ok": True, "outcome": "pong"})
    assert queue.depth() == 0


@pytest.mark.parametrize(
    ("event", "name", "outcome"),
    [
        ("star", "push.json", "ignored: unhandled event"),
        ("issue_comment", "issue_comment.created.json", "ignored: not a pull request"),
        ("installation", "installation.created.json", "logged"),
    ],
)
def test_deliveries_without_work_are_accepted_and_nothing_is_queued(
    client: httpx.Client, queue: HueyJobQueue, event: str, name: str, outcome: str
) -> None:
    response = deliver(client, compact(name), event)
    assert (response.status_code, response.json()) == (202, {"outcome": outcome})
    assert queue.depth() == 0


def test_the_bots_own_comment_quoting_the_command_queues_nothing(
    client: httpx.Client, queue: HueyJobQueue
) -> None:
    payload = json.loads(compact("derived/issue_comment.created.pull_request.json"))
    bot = {"login": "chart-review[bot]", "type": "Bot"}
    payload["comment"] |= {"body": "/chart-review\nre-runs this review", "user": bot}
    payload["sender"] = bot
    for n, action in enumerate(["created", "edited"]):
        payload["action"] = action
        response = deliver(client, json.dumps(payload).encode(), "issue_comment", f"bot-{n}")
        assert (response.status_code, response.json()) == (202, {"outcome": "ignored: bot author"})
    assert queue.depth() == 0


def break_state_db(settings: Settings) -> None:
    for path in settings.data_dir.glob("state.db*"):
        path.unlink()
    (settings.data_dir / "state.db").write_bytes(b"this is not a database" * 100)


def test_queue_failure_is_a_503_and_nothing_is_queued(
    client: httpx.Client, queue: HueyJobQueue, settings: Settings
) -> None:
    break_state_db(settings)
    response = deliver(client, compact("pull_request.opened.json"))
    assert response.status_code == 503
    assert response.json() == {"error": "queue unavailable: DatabaseError: file is not a database"}
    assert queue.depth() == 0


def test_healthz_reports_the_queue(
    client: httpx.Client, queue: HueyJobQueue, settings: Settings
) -> None:
    deliver(client, compact("pull_request.opened.json"))
    response = client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok", "queue_depth": 1})
    break_state_db(settings)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "error": f"state database {settings.data_dir / 'state.db'}: file is not a database",
    }


def test_metrics_count_deliveries_by_event_and_outcome(client: httpx.Client) -> None:
    deliver(client, compact("pull_request.opened.json"))
    deliver(client, compact("pull_request.opened.json"))
    deliver(client, compact("push.json"), "push", "delivery-2", **{"X-Hub-Signature-256": "bad"})
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    lines = set(response.text.splitlines())
    assert 'chart_review_deliveries_total{event="pull_request",outcome="queued"} 1.0' in lines
    assert (
        'chart_review_deliveries_total{event="pull_request",outcome="duplicate delivery"} 1.0'
        in lines
    )
    assert 'chart_review_deliveries_total{event="unverified",outcome="bad signature"} 1.0' in lines
    assert "chart_review_queue_depth 1.0" in lines


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging("INFO", stream)
    yield stream
    root.handlers[:], root.level = handlers, level


def test_log_lines_are_json_with_the_delivery_and_never_the_secret(
    client: httpx.Client, json_logs: io.StringIO
) -> None:
    deliver(client, compact("pull_request.opened.json"), delivery="abc-123")
    deliver(client, b"{}", "push", "abc-456", **{"X-Hub-Signature-256": "sha256=" + "1" * 64})
    lines = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    queued = next(line for line in lines if line["message"] == "delivery pull_request: queued")
    assert queued | {"time": "t"} == {
        "time": "t",
        "level": "INFO",
        "logger": "webhooks.app",
        "message": "delivery pull_request: queued",
        "delivery": "abc-123",
        "source": "127.0.0.1",  # whom the receiver's caps counted it to
        "repo": "Codertocat/Hello-World",
        "pr": 2,
        "head": HEAD,
    }
    rejected = next(line for line in lines if line.get("delivery") == "abc-456")
    assert (
        rejected["message"]
        == "delivery rejected (401): X-Hub-Signature-256 does not match the body"
    )
    assert SECRET.decode() not in json_logs.getvalue()


def test_receiver_refuses_to_start_without_a_secret(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, webhook_secret=b"")
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET is empty"):
        create_app(settings, HueyJobQueue.from_settings(settings))


def test_module_app_is_built_from_the_environment_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, json_logs: Any
) -> None:
    import webhooks.app as module

    monkeypatch.setattr(module, "_app", None)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "env-data"))
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "")
    monkeypatch.delenv("REDIS_URL", raising=False)
    with pytest.raises(SettingsError, match="GITHUB_WEBHOOK_SECRET"):
        _ = module.app
    assert not (tmp_path / "env-data").exists()

    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s3cret")
    app = module.app
    assert module.app is app
    with serve_app(app) as url:
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok", "queue_depth": 0}
