"""Serve an ASGI app for real on loopback: uvicorn in a background thread on a free port.

Tests that talk HTTP to the bot's own receiver use this, so the request goes through the same
server, parser and socket as in production.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

STARTUP_TIMEOUT_SECONDS = 10.0


@contextmanager
def serve_app(app: Any, options: dict[str, Any] | None = None) -> Iterator[str]:
    """Run `app` until the block ends; yields its base URL, e.g. "http://127.0.0.1:43121".
    `options`: uvicorn's, such as webhooks.server.server_options() to serve as `serve` does."""
    # Bind the socket here, before uvicorn starts, so the port is known and never raced for.
    # IPPROTO_TCP explicitly: asyncio enables TCP_NODELAY only on sockets that say TCP.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    defaults = {"log_config": None, "access_log": False}
    config = uvicorn.Config(
        app, **{**defaults, **(options or {})}, lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"serve-app-{port}"
    )
    thread.start()
    try:
        _wait_started(server, thread)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        server.force_exit = True  # idle keep-alive clients must not hold the test up
        thread.join(timeout=STARTUP_TIMEOUT_SECONDS)
        sock.close()


def _wait_started(server: uvicorn.Server, thread: threading.Thread) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.005)
