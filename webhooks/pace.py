"""How fast a body must arrive: within BODY_TIMEOUT, and after BODY_GRACE at MIN_BODY_RATE on
average, so that a trickle is cut within about a second instead of holding its connection (and
its source's share) until GitHub's 10 s are out.

Time comes from a `Timer`: the monotonic clock in the server, a clock a test moves by hand in the
tests, so that "a byte a second" needs no second of anyone's time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from webhooks.caps import BODY_GRACE, BODY_TIMEOUT, MIN_BODY_RATE
from webhooks.refusal import TIMED_OUT, TOO_SLOW, Refused

T = TypeVar("T")


class Timer(Protocol):
    def __call__(self) -> float:
        """Now, in seconds."""
        ...

    async def wait_until(self, deadline: float) -> None:
        """Return once now is at or past `deadline`."""
        ...


class MonotonicTimer:
    def __call__(self) -> float:
        return time.monotonic()

    async def wait_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))


@dataclass(frozen=True)
class Pace:
    timeout: float = BODY_TIMEOUT
    grace: float = BODY_GRACE
    min_rate: int = MIN_BODY_RATE  # bytes a second

    def deadline(self, started: float, received: int) -> float:
        """When the next byte is due, `received` bytes into a body begun at `started`."""
        return started + min(self.timeout, self.grace + received / self.min_rate)

    def refusal(self, elapsed: float, received: int, declared: int) -> Refused:
        if elapsed >= self.timeout:
            return Refused(408, f"body not received within {self.timeout:g} s", TIMED_OUT)
        reason = (
            f"body arriving at under {self.min_rate} bytes a second after the first "
            f"{self.grace:g} s: {received} of {declared} bytes in {elapsed:.1f} s"
        )
        return Refused(408, reason, TOO_SLOW)


async def by_deadline(timer: Timer, deadline: float, awaitable: Awaitable[T]) -> T:
    """`awaitable`'s result, or TimeoutError once `timer` reaches `deadline` first."""
    work = asyncio.ensure_future(awaitable)
    alarm = asyncio.ensure_future(timer.wait_until(deadline))
    try:
        done, _ = await asyncio.wait({work, alarm}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        alarm.cancel()
        if not work.done():
            work.cancel()
    if work not in done:
        raise TimeoutError
    return work.result()
