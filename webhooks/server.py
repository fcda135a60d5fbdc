"""How uvicorn serves the receiver: one set of options, used by `chart-review serve` and the tests.

uvicorn bounds a request's head in bytes (h11's incomplete-event limit) and an idle keep-alive
connection in time, but not the time a head takes to arrive: a client that sends half a header
line and stalls holds its connection for ever. `BoundedH11Protocol` closes it, and refuses
connections past the concurrency limit at once instead of letting them wait for their head.
The body's own bounds are the app's (webhooks/limits.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from webhooks.caps import HEADER_TIMEOUT, KEEP_ALIVE_TIMEOUT, MAX_CONNECTIONS, MAX_HEADER_BYTES

HEAD_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
OVER_CAPACITY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
)


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's head, from the moment the
    connection opens or the previous response ends, and a hard cap on open connections."""

    header_timeout = HEADER_TIMEOUT
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.limit_concurrency is not None and len(self.connections) > self.limit_concurrency:
            # uvicorn would answer 503 only once the head is in, which may be never.
            transport.write(OVER_CAPACITY)
            transport.close()
            return
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_arrived()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a complete head made a new request cycle
            self._head_arrived()

    def on_response_complete(self) -> None:
        # Armed before uvicorn handles a pipelined request, which disarms it again.
        self._await_head()
        super().on_response_complete()

    def _await_head(self) -> None:
        self._head_arrived()
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _head_arrived(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        pending, _ = self.conn.trailing_data
        if pending or self.conn.their_state is not h11.IDLE:
            self.transport.write(HEAD_TIMED_OUT)  # silence for a keep-alive that sent nothing
        self.transport.close()


def server_options() -> dict[str, Any]:
    """uvicorn.Config's (and uvicorn.run's) keyword arguments for the receiver."""
    return {
        "http": BoundedH11Protocol,  # explicitly h11: httptools, if installed, would drop the bounds
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "timeout_keep_alive": KEEP_ALIVE_TIMEOUT,
        "limit_concurrency": MAX_CONNECTIONS,
        # The client address stays the connection's peer: whom to believe about another is
        # WEBHOOK_TRUSTED_PROXIES's to say (webhooks/sources.py), not uvicorn's default of
        # believing X-Forwarded-For from 127.0.0.1.
        "proxy_headers": False,
        "log_config": None,  # the bot's own JSON logging (bot/app/logs.py)
        "access_log": False,
    }
