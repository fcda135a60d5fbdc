"""A clock a test moves by hand, for code that takes `clock: Callable[[], float]`, or a timer
(webhooks/pace.py) that also waits on it."""

from __future__ import annotations

import asyncio
import contextlib
import threading


class ManualClock:
    """Reads like time.time(); only advance() moves it. Safe to read, and wait on, from other
    threads and their event loops."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
            waiters, self._waiters = self._waiters, []
        for loop, moved in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed: nobody waits
                loop.call_soon_threadsafe(moved.set)

    async def wait_until(self, deadline: float) -> None:
        """Returns once the clock has been advanced to `deadline`, however long that takes."""
        loop = asyncio.get_running_loop()
        while True:
            moved = asyncio.Event()
            with self._lock:
                if self._now >= deadline:
                    return
                self._waiters.append((loop, moved))
            await moved.wait()
