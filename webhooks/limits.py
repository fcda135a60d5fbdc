"""What a request may cost before its signature is checked: a pure ASGI middleware around the app.

The body has to be read whole before its HMAC can be checked, so it is read here under these
bounds (their numbers in webhooks/caps.py):
- its declared `Content-Length`, refused at once past the cap, before a byte of it is read; a body
  without one (chunked) is refused, since GitHub always declares the length;
- the pace it arrives at (webhooks/pace.py): a trickle is cut after the first second;
- the budget the bodies being received share, by the bytes that have arrived, with a part kept for
  small bodies and a share per source (webhooks/budget.py, webhooks/sources.py).
A refusal closes the connection, so that a sender cannot go on streaming what nobody will read.

Pure ASGI rather than Starlette's BaseHTTPMiddleware, which reads the body through its own
buffers; the headers' own bounds are the server's (webhooks/server.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from webhooks.budget import BodyBudget, BudgetCaps, Hold
from webhooks.caps import MAX_DELIVERY_ID
from webhooks.pace import MonotonicTimer, Pace, Timer, by_deadline
from webhooks.refusal import BAD_REQUEST, NO_LENGTH, TOO_LARGE, Refusal, Refused, send_refusal
from webhooks.sources import Network, source_of

DELIVERY = b"x-github-delivery"


class BodyLimits:
    """Reads each request's body under the bounds, then hands it to `app` in one message.
    `budget` is shared by every request (by default one for bodies of `max_bytes`);
    `on_refused(refusal)` hears of each refusal (metrics, the log)."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        budget: BodyBudget | None = None,
        trusted_proxies: Sequence[Network] = (),
        on_refused: Callable[[Refusal], None] | None = None,
        timer: Timer | None = None,
    ) -> None:
        self.app, self.max_bytes, self.trusted_proxies = app, max_bytes, tuple(trusted_proxies)
        self.on_refused = on_refused
        self.timer: Timer = timer or MonotonicTimer()
        self.pace = Pace()  # the caps' own numbers (webhooks/caps.py)
        self.budget = budget or BodyBudget(BudgetCaps.for_cap(max_bytes))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        source = source_of(scope, self.trusted_proxies)
        try:
            length = self.declared_length(scope)
            hold = self.budget.open(source, length) if length else None
        except Refused as refused:
            await self.refuse(scope, send, refused, source)
            return
        if hold is None:  # no body to read (a GET, or an empty POST)
            await self.app(scope, receive, send)
            return
        try:
            try:
                body = await self.read_body(receive, length, hold)
            except Refused as refused:
                await self.refuse(scope, send, refused, source)
                return
            hold.arrived()
            if body is not None:  # None: the client went away
                await self.app(scope, replay(body, receive), send)
        finally:
            hold.release()  # the body's bytes are the app's until it has answered

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
            raise Refused(400, "Content-Length is not a number", BAD_REQUEST)
        length = int(declared)
        if length > self.max_bytes:
            reason = f"body of {length} bytes is over the {self.max_bytes}-byte limit"
            raise Refused(413, reason, TOO_LARGE)
        return length

    async def read_body(self, receive: Receive, length: int, hold: Hold) -> bytes | None:
        chunks: list[bytes] = []
        received = 0
        started = self.timer()
        while True:
            message = await self.next_message(receive, started, received, length)
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            if received + len(chunk) > length:  # the server enforces the length; never trust it
                raise Refused(413, f"body is over its declared {length} bytes", TOO_LARGE)
            hold.take(len(chunk))
            chunks.append(chunk)
            received += len(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def next_message(
        self, receive: Receive, started: float, received: int, length: int
    ) -> Message:
        """The server's next message, if it came by the time the pace allows for it."""
        deadline = self.pace.deadline(started, received)
        try:
            message = await by_deadline(self.timer, deadline, receive())
        except TimeoutError:
            message = None
        now = self.timer()
        if message is None or (now > deadline and message["type"] != "http.disconnect"):
            raise self.pace.refusal(now - started, received, length)
        return message

    async def refuse(self, scope: Scope, send: Send, refused: Refused, source: str) -> None:
        if self.on_refused is not None:
            delivery = delivery_of(scope)
            self.on_refused(
                Refusal(refused.status, refused.reason, refused.outcome, delivery, source)
            )
        await send_refusal(send, refused.status, refused.reason)


def delivery_of(scope: Scope) -> str | None:
    """The X-GitHub-Delivery header for the log, as sent: unverified, so cut and made printable."""
    raw = dict(scope["headers"]).get(DELIVERY)
    if not raw:
        return None
    text = raw[:MAX_DELIVERY_ID].decode("latin-1")
    return "".join(c if c.isprintable() else "?" for c in text)


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
