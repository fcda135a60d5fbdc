"""The webhook receiver: verify, route, store the job, answer. Nothing slow happens here.

A delivery is acknowledged only once its job is in the queue, so a 202 means the work will be
done; GitHub gives up on a delivery after 10 seconds, so the handler never calls GitHub or git.
`uvicorn webhooks.app:app` builds the app from the environment on first use.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from bot.app.jobspec import Job, JobQueue
from bot.app.logs import configure_logging, log_context, redact
from bot.app.metrics import CONTENT_TYPE, Metrics
from bot.app.queue import HueyJobQueue
from bot.app.settings import Settings, SettingsError
from webhooks.events import PONG, PayloadError, Routed, route
from webhooks.signature import SIGNATURE_HEADER, verify_signature

log = logging.getLogger(__name__)

EVENT_HEADER = "X-GitHub-Event"
DELIVERY_HEADER = "X-GitHub-Delivery"
MAX_DELIVERY_ID = 100
# Before the signature is checked, the event header is anyone's text: it must not become a label.
UNVERIFIED_EVENT = "unverified"
DUPLICATE = "duplicate delivery"


class Rejected(Exception):
    """A delivery refused with `status`; `reason` is one line for the sender, free of secrets."""

    def __init__(self, status: int, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.status, self.reason, self.outcome = status, reason, outcome


def require_webhook_secret(settings: Settings) -> None:
    if not settings.webhook_secret:
        raise SettingsError(
            "GITHUB_WEBHOOK_SECRET is empty: the receiver cannot tell GitHub's deliveries from "
            "anyone else's, so it will not start; set it to the App's webhook secret"
        )


def create_app(settings: Settings, queue: JobQueue, metrics: Metrics | None = None) -> FastAPI:
    require_webhook_secret(settings)
    metrics = metrics or Metrics()
    metrics.watch_queue(queue.depth)
    receiver = Receiver(settings, queue, metrics)
    app = FastAPI(title="chart-review-bot", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.metrics = metrics
    app.add_exception_handler(HTTPException, http_error)

    # Plain `def` routes: FastAPI runs them in its threadpool, off the event loop, since both
    # touch the queue's storage.
    def health_route() -> JSONResponse:
        return healthz(queue)

    def metrics_route() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    app.add_api_route("/webhook", receiver.handle, methods=["POST"])
    app.add_api_route("/healthz", health_route, methods=["GET"])
    app.add_api_route("/metrics", metrics_route, methods=["GET"])
    return app


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own refusals (a GET on /webhook, an unknown path) in the receiver's shape, so
    every 4xx a sender sees says why under `error`."""
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)


def healthz(queue: JobQueue) -> JSONResponse:
    try:
        reason = queue.health()
        depth = queue.depth() if reason is None else 0
    except Exception as exc:
        reason = _describe(exc)
    if reason is not None:
        return JSONResponse({"status": "unavailable", "error": redact(reason)}, status_code=503)
    return JSONResponse({"status": "ok", "queue_depth": depth})


class Receiver:
    def __init__(self, settings: Settings, queue: JobQueue, metrics: Metrics) -> None:
        self.settings, self.queue, self.metrics = settings, queue, metrics

    async def handle(self, request: Request) -> JSONResponse:
        event = UNVERIFIED_EVENT
        with log_context(delivery=request.headers.get(DELIVERY_HEADER, "")[:100] or None):
            try:
                body = await read_capped(request, self.settings.max_body_bytes)
                check_signature(self.settings.webhook_secret, body, request)
                event = required_header(request, EVENT_HEADER)
                delivery = delivery_id(request)
                routed = route_payload(event, parse_object(body), delivery)
                return await self.accept(event, delivery, routed)
            except Rejected as rejected:
                self.metrics.delivery(event, rejected.outcome)
                log.warning("delivery rejected (%d): %s", rejected.status, rejected.reason)
                return JSONResponse({"error": rejected.reason}, status_code=rejected.status)

    async def accept(self, event: str, delivery: str, routed: Routed) -> JSONResponse:
        with log_context(**job_log_fields(routed.job)):
            if routed.outcome == PONG:
                status, outcome = 200, PONG
            else:
                status, outcome = await self.submit(event, delivery, routed)
            self.metrics.delivery(event, outcome)
            log.info("delivery %s: %s", event, outcome)
        if outcome == PONG:
            return JSONResponse({"ok": True, "outcome": PONG})
        return JSONResponse({"outcome": outcome}, status_code=status)

    async def submit(self, event: str, delivery: str, routed: Routed) -> tuple[int, str]:
        # The queue's storage is a file or a socket: keep its I/O off the event loop.
        try:
            fresh = await run_in_threadpool(self.queue.submit, delivery, event, routed.job)
        except Exception as exc:
            log.exception("queue refused delivery")
            raise Rejected(
                503, f"queue unavailable: {_describe(exc)}", "queue unavailable"
            ) from exc
        return (202, routed.outcome) if fresh else (200, DUPLICATE)


async def read_capped(request: Request, cap: int) -> bytes:
    """The body, refused past `cap` bytes: by its declared length before reading anything, and
    while reading, for a chunked body or one longer than it declared."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise Rejected(413, f"body of {declared} bytes is over the {cap}-byte limit", "too large")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise Rejected(413, f"body is over the {cap}-byte limit", "too large")
    return bytes(body)


def check_signature(secret: bytes, body: bytes, request: Request) -> None:
    header = request.headers.get(SIGNATURE_HEADER)
    if header is None:
        raise Rejected(401, f"missing {SIGNATURE_HEADER} header", "bad signature")
    if not verify_signature(secret, body, header):
        raise Rejected(401, f"{SIGNATURE_HEADER} does not match the body", "bad signature")


def required_header(request: Request, name: str) -> str:
    value = request.headers.get(name, "").strip()
    if not value:
        raise Rejected(400, f"missing {name} header", "bad request")
    return value


def delivery_id(request: Request) -> str:
    """GitHub's ids are 36-character GUIDs. The header is outside the signature and becomes a
    key in the store, so anything long or unprintable is refused rather than stored."""
    value = required_header(request, DELIVERY_HEADER)
    if len(value) > MAX_DELIVERY_ID or not value.isprintable():
        raise Rejected(400, f"{DELIVERY_HEADER} is not a delivery id", "bad request")
    return value


def parse_object(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise Rejected(400, "body is not UTF-8", "bad request") from None
    except json.JSONDecodeError as exc:
        reason = f"body is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
        reason += "set the webhook's content type to application/json"
        raise Rejected(400, reason, "bad request") from None
    except RecursionError:
        raise Rejected(400, "body is not JSON: nested too deeply", "bad request") from None
    except ValueError as exc:  # e.g. an integer over Python's 4,300-digit conversion limit
        raise Rejected(400, f"body is not JSON: {str(exc).split(':')[0]}", "bad request") from None
    if not isinstance(payload, dict):
        raise Rejected(400, "body is not a JSON object", "bad request")
    return payload


def route_payload(event: str, payload: dict[str, Any], delivery: str) -> Routed:
    try:
        return route(event, payload, delivery)
    except PayloadError as exc:
        raise Rejected(400, f"{event} payload: {exc}", "bad payload") from None


def job_log_fields(job: Job | None) -> dict[str, Any]:
    """The log context a job carries: which repository, PR and head it is about."""
    if job is None:
        return {}
    return {
        "repo": job.repo.full_name,
        "pr": getattr(job, "number", None),
        "head": getattr(job, "head_sha", None),
    }


def _describe(exc: BaseException) -> str:
    # The first line only, cut before any "@host" a connection error might quote with its URL.
    first = (str(exc).splitlines() or [""])[0].split(" @")[0]
    return redact(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def app_from_env() -> FastAPI:
    settings = Settings.from_env()
    require_webhook_secret(settings)  # before the queue creates anything on disk
    configure_logging(os.environ.get("LOG_LEVEL", "INFO"))
    return create_app(settings, HueyJobQueue.from_settings(settings))


_app: FastAPI | None = None


def __getattr__(name: str) -> FastAPI:
    # `app` is built on first access so that importing this module (tests, the CLI) reads no
    # environment and opens no queue.
    global _app
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _app is None:
        _app = app_from_env()
    return _app
