"""A request the receiver refuses before its signature is checked, and how it is answered."""

from __future__ import annotations

import json
from dataclasses import dataclass

from starlette.types import Send

# Metric labels (chart_review_deliveries_total{outcome}): a fixed set.
TIMED_OUT, TOO_SLOW, TOO_LARGE, NO_LENGTH = "timed out", "too slow", "too large", "no length"
BUSY, SOURCE_BUSY, BAD_REQUEST = "busy", "source busy", "bad request"


class Refused(Exception):
    """`reason` is one line for the sender that names the cap and its number."""

    def __init__(self, status: int, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.status, self.reason, self.outcome = status, reason, outcome


@dataclass(frozen=True)
class Refusal:
    """What the receiver's log and metrics hear of a refusal. `delivery` is the sender's
    X-GitHub-Delivery header as given (unverified, cut short), `source` whom it was counted to."""

    status: int
    reason: str
    outcome: str
    delivery: str | None
    source: str


async def send_refusal(send: Send, status: int, reason: str) -> None:
    """The receiver's error shape, `{"error": reason}`, on a connection the server then closes,
    so that a sender cannot go on streaming what nobody will read."""
    body = json.dumps({"error": reason}, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
