"""The webhook receiver: verify, route, store the job, answer. Nothing slow happens here.

A delivery is acknowledged only once its job is in the queue, so a 202 means the work will be
done; GitHub gives up on a delivery after 10 seconds, so the handler never calls GitHub or git.
`uvicorn webhooks.app:app` builds the app from the environment on first use; `chart-review serve`
adds the server's own bounds on connections and headers (webhooks/server.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
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
from bot.app.store import Store
from webhooks.budget import BodyBudget, BudgetCaps
from webhooks.caps import BODY_CLAIM_TTL, MAX_DELIVERY_ID
from webhooks.events import PONG, PayloadError, Routed, route
from webhooks.limits import BodyLimits
from webhooks.pace import Timer
from webhooks.refusal import Refusal
from webhooks.signature import SIGNATURE_HEADER, verify_signature
from webhooks.sources import source_of

log = logging.getLogger(__name__)

EVENT_HEADER = "X-GitHub-Event"
DELIVERY_HEADER = "X-GitHub-Delivery"
# Before the signature is checked, the event header is anyone's text: it must not become a label.
UNVERIFIED_EVENT = "unverified"
DUPLICATE = "duplicate delivery"
# A signed body is claimed by its digest as well as by its delivery id, because the id is outside
# the signature: a captured delivery replayed under fresh ids is dropped. GitHub's own redelivery
# keeps the original id, so the id claim already decides it; the body claim is released whenever
# nothing was queued (queue down, id seen), so a maintainer's redelivery of a failed delivery
# still goes through. It lapses after BODY_CLAIM_TTL (an hour) because two genuine events can share
# a body (the same "Re-run" clicked twice on an unchanged check run): an hour's replays cost one
# job at most.
BODY_KEY = "body:"


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


def create_app(
    settings: Settings,
    queue: JobQueue,
    metrics: Metrics | None = None,
    store: Store | None = None,
    timer: Timer | None = None,
) -> FastAPI:
    """`store` holds the body claims; by default the queue's own (where its delivery claims are).
    `timer` paces the bodies being received (webhooks/pace.py); the monotonic clock by default."""
    require_webhook_secret(settings)
    metrics = metrics or Metrics()
    metrics.watch_queue(queue.depth)
    receiver = Receiver(settings, queue, metrics, store or queue_store(queue))
    app = FastAPI(title="chart-review-bot", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.metrics = metrics
    app.add_exception_handler(HTTPException, http_error)
    budget = BodyBudget(BudgetCaps.for_cap(settings.max_body_bytes))
    app.state.body_budget = budget
    metrics.watch_bodies(lambda: budget.held, budget.bodies_arriving)
    app.add_middleware(
        BodyLimits,
        max_bytes=settings.max_body_bytes,
        budget=budget,
        trusted_proxies=settings.trusted_proxies,
        on_refused=refusal_recorder(metrics),
        timer=timer,
    )

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


def queue_store(queue: JobQueue) -> Store:
    if isinstance(queue, HueyJobQueue):
        return queue.store
    raise TypeError(f"create_app needs a store for the body claims beside {type(queue).__name__}")


def refusal_recorder(metrics: Metrics) -> Callable[[Refusal], None]:
    """What BodyLimits does with a body it refused before the receiver saw it: what the receiver
    does with its own refusals, naming the source it was counted to."""

    def record(refusal: Refusal) -> None:
        metrics.delivery(UNVERIFIED_EVENT, refusal.outcome)
        with log_context(delivery=refusal.delivery, source=refusal.source):
            log.warning("delivery rejected (%d): %s", refusal.status, refusal.reason)

    return record


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
    def __init__(self, settings: Settings, queue: JobQueue, metrics: Metrics, store: Store) -> None:
        self.settings, self.queue, self.metrics, self.store = settings, queue, metrics, store

    async def handle(self, request: Request) -> JSONResponse:
        event = UNVERIFIED_EVENT
        delivery_header = request.headers.get(DELIVERY_HEADER, "")[:MAX_DELIVERY_ID] or None
        source = source_of(request.scope, self.settings.trusted_proxies)
        with log_context(delivery=delivery_header, source=source):
            try:
                body = await request.body()  # bounded by BodyLimits on its way in
                check_signature(self.settings.webhook_secret, body, request)
                event = required_header(request, EVENT_HEADER)
                delivery = delivery_id(request)
                routed = route_payload(event, parse_object(body), delivery)
                return await self.accept(event, delivery, routed, body)
            except Rejected as rejected:
                self.metrics.delivery(event, rejected.outcome)
                log.warning("delivery rejected (%d): %s", rejected.status, rejected.reason)
                return JSONResponse({"error": rejected.reason}, status_code=rejected.status)

    async def accept(self, event: str, delivery: str, routed: Routed, body: bytes) -> JSONResponse:
        with log_context(**job_log_fields(routed.job)):
            if routed.outcome == PONG:
                status, outcome = 200, PONG
            else:
                status, outcome = await self.submit(event, delivery, routed, body)
            self.metrics.delivery(event, outcome)
            log.info("delivery %s: %s", event, outcome)
        if outcome == PONG:
            return JSONResponse({"ok": True, "outcome": PONG})
        return JSONResponse({"outcome": outcome}, status_code=status)

    async def submit(
        self, event: str, delivery: str, routed: Routed, body: bytes
    ) -> tuple[int, str]:
        # The queue's storage is a file or a socket: keep its I/O off the event loop.
        try:
            seen = await run_in_threadpool(self.record, body, delivery, event, routed.job)
        except Exception as exc:
            log.exception("queue refused delivery")
            raise Rejected(
                503, f"queue unavailable: {_describe(exc)}", "queue unavailable"
            ) from exc
        if seen is not None:
            log.info("dropped: %s seen before", seen)
            return 200, DUPLICATE
        return 202, routed.outcome

    def record(self, body: bytes, delivery: str, event: str, job: Job | None) -> str | None:
        """Claim the body, then submit the delivery; None when both were new and the job is
        queued, else which of the two was seen before."""
        key = BODY_KEY + hashlib.sha256(body).hexdigest()
        if not self.store.claim(key, BODY_CLAIM_TTL):
            return "its body"
        try:
            fresh = self.queue.submit(delivery, event, job)
        except Exception:
            self.store.release(key)
            raise
        if not fresh:
            self.store.release(key)  # nothing was queued for this body
            return "its delivery id"
        return None


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
