"""A clock a test moves by hand, for code that takes `clock: Callable[[], float]`."""

from __future__ import annotations

import threading


class ManualClock:
    """Reads like time.time(); only advance() moves it. Safe to read from other threads."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds
