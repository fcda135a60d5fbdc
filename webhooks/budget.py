"""What the bodies being received may hold, counted by the bytes that have arrived.

A sender's declared `Content-Length` costs nothing here: a connection that declares 5 MB and
trickles holds what it has sent, so slow connections cannot lock the budget with promises. Three
bounds, each with its own refusal:
- all bodies together hold at most BODIES_IN_FLIGHT bodies at the cap (503);
- large bodies (declared over SMALL_BODY_BYTES) leave SMALL_BODIES_RESERVED of that to small ones,
  which is what every delivery of GitHub's is (503);
- one source has at most SOURCE_BODIES bodies arriving, and holds at most one body at the cap (429).

One event loop owns a budget, so it takes no lock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from webhooks.caps import BODIES_IN_FLIGHT, SMALL_BODIES_RESERVED, SMALL_BODY_BYTES, SOURCE_BODIES
from webhooks.refusal import BUSY, SOURCE_BUSY, Refused


@dataclass(frozen=True)
class BudgetCaps:
    total: int  # bytes all bodies being received may hold
    large: int  # bytes bodies declared over `small_body` may hold together
    per_source: int  # bytes one source's bodies may hold
    source_bodies: int  # bodies one source may have arriving at once
    small_body: int = SMALL_BODY_BYTES

    @classmethod
    def for_cap(cls, max_bytes: int) -> BudgetCaps:
        """The caps for bodies of at most `max_bytes` (WEBHOOK_MAX_BYTES)."""
        total = BODIES_IN_FLIGHT * max_bytes
        return cls(
            total=total,
            large=total - int(total * SMALL_BODIES_RESERVED),
            per_source=max_bytes,
            source_bodies=SOURCE_BODIES,
        )


class BodyBudget:
    def __init__(self, caps: BudgetCaps) -> None:
        self.caps = caps
        self.held = 0  # bytes of every body being received or handled
        self.held_large = 0
        self.by_source: Counter[str] = Counter()  # bytes, per source
        self.arriving: Counter[str] = Counter()  # bodies still arriving, per source

    def open(self, source: str, declared: int) -> Hold:
        """A hold for one body from `source`; refused when the source has too many arriving."""
        if self.arriving[source] >= self.caps.source_bodies:
            reason = (
                f"{source} already has {self.arriving[source]} bodies arriving, the most one "
                f"source may have at once ({self.caps.source_bodies}); retry"
            )
            raise Refused(429, reason, SOURCE_BUSY)
        self.arriving[source] += 1
        return Hold(self, source, large=declared > self.caps.small_body)

    def bodies_arriving(self) -> int:
        return sum(self.arriving.values())

    def check(self, hold: Hold, more: int) -> None:
        """Refuses `more` bytes for `hold` past any of the three bounds."""
        caps = self.caps
        if self.by_source[hold.source] + more > caps.per_source:
            reason = (
                f"{hold.source} would hold {self.by_source[hold.source] + more} bytes of bodies "
                f"being received, over the {caps.per_source}-byte share of one source; retry"
            )
            raise Refused(429, reason, SOURCE_BUSY)
        if hold.large and self.held_large + more > caps.large:
            reason = (
                f"bodies over {caps.small_body} bytes would hold {self.held_large + more} bytes, "
                f"over the {caps.large} bytes they may fill of the receiver's budget; retry"
            )
            raise Refused(503, reason, BUSY)
        if self.held + more > caps.total:
            reason = (
                f"bodies being received would hold {self.held + more} bytes, over the "
                f"receiver's {caps.total}-byte budget; retry"
            )
            raise Refused(503, reason, BUSY)

    def add(self, hold: Hold, count: int) -> None:
        self.held += count
        self.by_source[hold.source] += count
        if hold.large:
            self.held_large += count

    def finish_arriving(self, source: str) -> None:
        self.arriving[source] -= 1
        if not self.arriving[source]:
            del self.arriving[source]

    def forget(self, hold: Hold) -> None:
        self.add(hold, -hold.bytes)
        if not self.by_source[hold.source]:
            del self.by_source[hold.source]


class Hold:
    """One body's share of the budget: `take` as its bytes arrive, `arrived` once they all have,
    `release` when the request is done with it (refused, or handled)."""

    def __init__(self, budget: BodyBudget, source: str, large: bool) -> None:
        self.budget, self.source, self.large = budget, source, large
        self.bytes = 0
        self._arriving = True

    def take(self, count: int) -> None:
        self.budget.check(self, count)
        self.budget.add(self, count)
        self.bytes += count

    def arrived(self) -> None:
        if self._arriving:
            self._arriving = False
            self.budget.finish_arriving(self.source)

    def release(self) -> None:
        self.arrived()
        self.budget.forget(self)
        self.bytes = 0
