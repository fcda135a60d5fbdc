"""Prometheus metrics for the receiver and the worker.

Each `Metrics` owns its registry rather than using prometheus-client's global one, so several apps
in one test process (or a receiver and a worker in one demo process) never collide.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)

log = logging.getLogger(__name__)

PREFIX = "chart_review_"
CONTENT_TYPE = CONTENT_TYPE_LATEST
# A review renders two sides per profile: seconds for a small chart, minutes for a large one.
REVIEW_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.deliveries = Counter(
            PREFIX + "deliveries_total",
            "Webhook deliveries received, by event and what was done with them.",
            ["event", "outcome"],
            registry=self.registry,
        )
        self.reviews = Counter(
            PREFIX + "reviews_total",
            "Reviews finished, by check-run conclusion.",
            ["conclusion"],
            registry=self.registry,
        )
        self.review_duration = Histogram(
            PREFIX + "review_duration_seconds",
            "Wall time of one review, from job start to results published.",
            buckets=REVIEW_BUCKETS,
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            PREFIX + "queue_depth",
            "Jobs waiting in the queue, read when scraped (NaN when the queue does not answer).",
            registry=self.registry,
        )
        self.not_reviewed = Counter(
            PREFIX + "charts_not_reviewed_total",
            "Charts a review could not look at (a dependency refused, a lock out of sync); the "
            "worker's log says why.",
            registry=self.registry,
        )
        self.commands = Counter(
            PREFIX + "commands_total",
            "Comment commands, by command and what was done: run, answered, refused, held back.",
            ["command", "outcome"],
            registry=self.registry,
        )
        self.body_bytes = Gauge(
            PREFIX + "webhook_body_bytes",
            "Bytes held by the webhook bodies being received or handled, by bytes arrived.",
            registry=self.registry,
        )
        self.bodies_arriving = Gauge(
            PREFIX + "webhook_bodies_arriving",
            "Webhook bodies still arriving, before their signature can be checked.",
            registry=self.registry,
        )
        self.api_errors = Counter(
            PREFIX + "github_api_errors_total",
            "GitHub API responses with an error status.",
            ["status"],
            registry=self.registry,
        )

    def watch_queue(self, depth: Callable[[], int]) -> None:
        """Read the queue depth from `depth` at every scrape."""
        self.queue_depth.set_function(lambda: _safe_depth(depth))

    def watch_bodies(self, held: Callable[[], int], arriving: Callable[[], int]) -> None:
        """Read what the receiver's body budget holds at every scrape."""
        self.body_bytes.set_function(lambda: float(held()))
        self.bodies_arriving.set_function(lambda: float(arriving()))

    def delivery(self, event: str, outcome: str) -> None:
        self.deliveries.labels(event=event, outcome=outcome).inc()

    def chart_not_reviewed(self) -> None:
        self.not_reviewed.inc()

    def command(self, command: str, outcome: str) -> None:
        self.commands.labels(command=command, outcome=outcome).inc()

    def review_finished(self, conclusion: str, seconds: float) -> None:
        self.reviews.labels(conclusion=conclusion).inc()
        self.review_duration.observe(seconds)

    def api_error(self, status: int | str) -> None:
        self.api_errors.labels(status=str(status)).inc()

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry."""
        return generate_latest(self.registry)

    def serve(self, port: int, addr: str = "0.0.0.0") -> None:
        """Expose this registry on its own HTTP port (for the worker, which has no web app)."""
        start_http_server(port, addr=addr, registry=self.registry)


def _safe_depth(depth: Callable[[], int]) -> float:
    # A broken queue must not break the scrape: /healthz reports why, the gauge reports NaN.
    try:
        return float(depth())
    except Exception as exc:
        log.warning("queue depth unavailable: %s: %s", type(exc).__name__, exc)
        return math.nan
