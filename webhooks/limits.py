"""What a request may cost before its signature is checked: a pure ASGI middleware around the app.

The body has to be read whole before its HMAC can be checked, so it is read here under three
bounds: its declared `Content-Length` (refused at once past the cap, before a byte of it is read;
a body without one, i.e. chunked, is refused: GitHub always declares the length), the time it
takes to arrive, and the bytes all bodies being read hold together. A refusal closes the
connection, so that a sender cannot go on streaming what nobody will read.

Pure ASGI rather than Starlette's BaseHTTPMiddleware, which reads the body through its own
buffers; the headers' own bounds are the server's (webhooks/server.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

# GitHub gives up on a delivery it has not had an answer to within 10 s, so a body still arriving
# after that is not one GitHub is waiting on.
BODY_TIMEOUT = 10.0
# All bodies being read at once hold at most this many bodies at the cap: a burst of GitHub's
# deliveries (tens of KB each) never comes near it, while unsigned senders cannot make the
# receiver hold more than this however many connections they open.
BODIES_IN_FLIGHT = 4

TIMED_OUT, TOO_LARGE, NO_LENGTH, BUSY = "timed out", "too large", "no length", "busy"


class Refused(Exception):
    def __init__(self, status: int, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.status, self.reason, self.outcome = status, reason, outcome


class BodyLimits:
    """Reads each request's body under the bounds, then hands it to `app` in one message.
    `on_refused(status, reason, outcome)` hears of each refusal (metrics, the log)."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        timeout: float = BODY_TIMEOUT,
        on_refused: Callable[[int, str, str], None] | None = None,
    ) -> None:
        self.app, self.max_bytes, self.timeout = app, max_bytes, timeout
        self.on_refused = on_refused
        self.budget = BODIES_IN_FLIGHT * max_bytes
        self.in_flight = 0  # bytes reserved by the bodies being read; one event loop, no lock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            length = self.declared_length(scope)
        except Refused as refused:
            await self.refuse(send, refused)
            return
        if not length:  # no body to read (a GET, or an empty POST)
            await self.app(scope, receive, send)
            return
        if self.in_flight + length > self.budget:
            await self.refuse(send, Refused(503, "too many bodies being received; retry", BUSY))
            return
        self.in_flight += length
        try:
            try:
                body = await self.read_body(receive, length)
            except Refused as refused:
                await self.refuse(send, refused)
                return
            if body is not None:  # None: the client went away
                await self.app(scope, replay(body, receive), send)
        finally:
            self.in_flight -= length

    def declared_length(self, scope: Scope) -> int:
        """The body's declared length, refused past the cap; 0 when there is no body."""
        headers = dict(scope["headers"])  # the server has refused conflicting lengths
        if b"transfer-encoding" in headers:
            raise Refused(411, "a chunked body is refused; send Content-Length", NO_LENGTH)
        declared = headers.get(b"content-length")
        if declared is None:
            if scope["method"] == "POST":
                raise Refused(411, "a POST needs a Content-Length header", NO_LENGTH)
            return 0
        if not declared.isdigit():  # h11 lets only digits through; another server might not
            raise Refused(400, "Content-Length is not a number", "bad request")
        length = int(declared)
        if length > self.max_bytes:
            reason = f"body of {length} bytes is over the {self.max_bytes}-byte limit"
            raise Refused(413, reason, TOO_LARGE)
        return length

    async def read_body(self, receive: Receive, length: int) -> bytes | None:
        chunks: list[bytes] = []
        received = 0
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunks.append(message.get("body", b""))
                    received += len(chunks[-1])
                    if received > length:  # the server enforces the length; never trust it
                        reason = f"body is over its declared {length} bytes"
                        raise Refused(413, reason, TOO_LARGE)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError:
            reason = f"body not received within {self.timeout:g} s"
            raise Refused(408, reason, TIMED_OUT) from None

    async def refuse(self, send: Send, refused: Refused) -> None:
        if self.on_refused is not None:
            self.on_refused(refused.status, refused.reason, refused.outcome)
        await send_refusal(send, refused.status, refused.reason)


async def send_refusal(send: Send, status: int, reason: str) -> None:
    """The receiver's error shape, `{"error": reason}`, on a connection the server then closes."""
    body = json.dumps({"error": reason}, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body already read, then whatever the server says next (the
    disconnect, once the response is sent)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        message: dict[str, Any] = {"type": "http.request", "body": body, "more_body": False}
        return message

    return replayed
