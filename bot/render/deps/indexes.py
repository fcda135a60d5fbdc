"""Chart repositories' indexes, each downloaded once however many dependencies want it: once per
review (the review pins what it read), and shared by the fetcher's later reviews for
INDEX_SECONDS. A failure is kept as long, so forty dependencies on a repository that is down ask
it once. Two threads that want the same index wait for one download.

An index is keyed by its repository and the credentials it was read with: a private repository's
index is never handed to a review that has no credentials for it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from bot.render.deps.index import RepoIndex
from bot.render.deps.policy import normalise

# Short: a chart just published is seen within a minute, and a replay of history or a worker's
# stream of reviews still downloads a large index (tens of MB) once a minute at most.
INDEX_SECONDS = 60.0
# Indexes shared at once: each may hold tens of thousands of entries.
MAX_INDEXES = 4

IndexKey = tuple[str, str | None]  # the repository, a digest of its credentials


@dataclass(frozen=True)
class IndexFailure:
    reason: str  # ends "could not be fetched: …"


IndexResult = RepoIndex | IndexFailure
Pinned = dict[IndexKey, IndexResult]  # one review's: what it read stays what it reads


def index_key(repository: str, auth: tuple[str, str] | None) -> IndexKey:
    secret = None if auth is None else hashlib.sha256("\0".join(auth).encode()).hexdigest()
    return normalise(repository), secret


class SharedIndexes:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.downloads = 0  # index downloads started: once per repository and review at most
        self._held: OrderedDict[IndexKey, tuple[IndexResult, float]] = OrderedDict()
        self._lock = threading.Lock()
        # One lock per key ever asked for: keys are the allow-lists' repositories, a few.
        self._flights: dict[IndexKey, threading.Lock] = {}

    def get(
        self, key: IndexKey, download: Callable[[], IndexResult], pinned: Pinned | None = None
    ) -> IndexResult:
        if pinned is not None and key in pinned:
            return pinned[key]
        with self._flight(key):
            found = self._fresh(key)
            if found is None:
                with self._lock:
                    self.downloads += 1
                found = download()
                self._keep(key, found)
        if pinned is not None:
            pinned.setdefault(key, found)
        return found

    def _flight(self, key: IndexKey) -> threading.Lock:
        with self._lock:
            return self._flights.setdefault(key, threading.Lock())

    def _fresh(self, key: IndexKey) -> IndexResult | None:
        with self._lock:
            held = self._held.get(key)
            if held is None or held[1] <= self.clock():
                return None
            self._held.move_to_end(key)
            return held[0]

    def _keep(self, key: IndexKey, result: IndexResult) -> None:
        now = self.clock()
        with self._lock:
            self._held[key] = (result, now + INDEX_SECONDS)
            self._held.move_to_end(key)
            for stale in [k for k, (_, until) in self._held.items() if until <= now]:
                del self._held[stale]
            while len(self._held) > MAX_INDEXES:
                self._held.popitem(last=False)
