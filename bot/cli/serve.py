"""`chart-review serve` and `chart-review worker`: the App's processes.

`serve` runs the webhook receiver under uvicorn and, unless `--no-worker`, a huey consumer in the
same process (the one-machine default). `worker` runs a consumer alone, for scale-out beside
`serve --no-worker` on a shared Redis.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI
from huey.consumer import Consumer

from bot.app.github.app import AppCredentials, GitHubApp
from bot.app.jobs import make_worker
from bot.app.logs import configure_logging
from bot.app.metrics import Metrics
from bot.app.queue import HueyJobQueue, Reaper
from bot.app.settings import Settings
from webhooks.app import create_app
from webhooks.server import server_options

log = logging.getLogger(__name__)

# An idle consumer polls SQLite with a growing delay; cap it so a quiet bot still answers the
# next PR within a second or so.
MAX_POLL_DELAY = 1.0


class EmbeddedConsumer(Consumer):
    """A consumer that leaves signals to its host: uvicorn owns them in `serve`, and a consumer
    started off the main thread (tests) may not install handlers at all."""

    def _set_signal_handlers(self) -> None:
        pass


@dataclass
class AppProcess:
    app: FastAPI
    queue: HueyJobQueue
    consumer: Consumer | None
    reaper: Reaper | None

    def start(self) -> None:
        if self.consumer is not None and self.reaper is not None:
            self.consumer.start()
            self.reaper.start()

    def stop(self) -> None:
        if self.consumer is not None and self.reaper is not None:
            self.reaper.stop()
            self.consumer.stop(graceful=True)
        self.queue.close()


def github_app(settings: Settings) -> GitHubApp:
    assert settings.app_id is not None  # require_app() said so
    return GitHubApp(
        AppCredentials(
            app_id=settings.app_id,
            private_key=settings.private_key,
            api_url=settings.api_url,
            seconds_between_requests=settings.seconds_between_requests,
            seconds_between_writes=settings.seconds_between_writes,
            retry_backoff=settings.github_retry_backoff,
        )
    )


def build(
    settings: Settings, with_worker: bool = True, clock: Callable[[], float] = time.time
) -> AppProcess:
    """The receiver, its queue and (optionally) an in-process consumer, not yet started; `clock`
    is the store's, where deliveries, bodies and replies are claimed for a time."""
    settings.require_app()
    metrics = Metrics()
    if with_worker:
        queue = make_worker(settings, github_app(settings), metrics, clock)
        consumer: Consumer | None = EmbeddedConsumer(
            queue.huey, workers=settings.workers, max_delay=MAX_POLL_DELAY
        )
        reaper: Reaper | None = Reaper(queue)
    else:
        queue, consumer, reaper = HueyJobQueue.from_settings(settings, clock=clock), None, None
    app = create_app(settings, queue, metrics, store=queue.store)
    return AppProcess(app, queue, consumer, reaper)


def serve(host: str, port: int, with_worker: bool, fd: int | None = None) -> int:
    """`fd`: a listening socket already bound (socket activation), in place of host and port."""
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    process = build(settings, with_worker)
    process.start()
    where: dict[str, object] = {"fd": fd} if fd is not None else {"host": host, "port": port}
    try:
        uvicorn.run(process.app, **where, **server_options())  # type: ignore[arg-type]
    finally:
        process.stop()
    return 0


def worker() -> int:
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    settings.require_app()
    metrics = Metrics()
    if settings.metrics_port:
        metrics.serve(settings.metrics_port)
    queue = make_worker(settings, github_app(settings), metrics)
    metrics.watch_queue(queue.depth)
    reaper = Reaper(queue)
    reaper.start()
    try:
        # SIGTERM (what Kubernetes and docker send) finishes the reviews in hand, then stops.
        consumer = queue.huey.create_consumer(
            workers=settings.workers, max_delay=MAX_POLL_DELAY, graceful_signal="TERM"
        )
        consumer.run()
    finally:
        reaper.stop()
        queue.close()
    return 0
