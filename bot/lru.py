"""A bounded least-recently-used map: the memo for a long-lived worker that reviews untrusted charts,
where an unbounded cache is a memory leak an attacker can drive."""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

# Every cache made, so that a benchmark can measure a cold review with one call.
_ALL: weakref.WeakSet[Any] = weakref.WeakSet()


class BoundedCache(Generic[K, V]):
    """At most `size` entries, or with `weight`, entries weighing at most `size` in all (e.g. bytes);
    the least recently used goes first. Thread-safe."""

    def __init__(self, size: int, weight: Callable[[V], int] | None = None) -> None:
        self.size = size
        self._weight = weight
        self._total = 0
        self._data: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, key: K) -> V | None:
        # Without the lock: a review asks tens of thousands of times (tree levels, YAML leaves),
        # and the lock cost more than the lookup. Each OrderedDict call is atomic under the GIL,
        # and `put` (which holds the lock) is the one to change what is held or its weight; an
        # entry evicted between the two calls is simply not moved.
        data = self._data
        value = data.get(key)
        if value is not None:
            try:
                data.move_to_end(key)
            except KeyError:
                return value  # evicted meanwhile: there is nothing to move
        return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            if self._weight is not None:
                old = self._data.get(key)
                self._total += self._weight(value) - (0 if old is None else self._weight(old))
            self._data[key] = value
            self._data.move_to_end(key)
            while self._data and self._over():
                _, gone = self._data.popitem(last=False)
                if self._weight is not None:
                    self._total -= self._weight(gone)

    def _over(self) -> bool:
        return self._total > self.size if self._weight is not None else len(self._data) > self.size

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value, else `make()`'s, remembered (computed outside the lock)."""
        value = self.get(key)
        if value is None:
            value = make()
            self.put(key, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._total = 0

    def __len__(self) -> int:
        return len(self._data)


class IdentityMemo(Generic[T, V]):
    """What `make(obj)` gave, found by the object's identity: for parsed YAML, which identical text
    shares between profiles and sides, identity is one lookup where equality would walk the whole
    object. Each entry holds its object, so no other object can take its id while it is remembered.
    The objects must not change once seen (rendered manifests are read-only).

    At most `size` entries, the oldest made going first. A lookup takes no lock (a check asks
    thousands of times per review, and a dict's get is atomic); only storing does. Two threads
    making the same entry at once both compute it, and either result is right."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: dict[int, tuple[T, V]] = {}
        self._lock = threading.Lock()
        _ALL.add(self)

    def get_or_make(self, obj: T, make: Callable[[T], V]) -> V:
        hit = self._data.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = make(obj)
        with self._lock:
            self._data[id(obj)] = (obj, value)
            while len(self._data) > self.size:
                del self._data[next(iter(self._data))]
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class IdentitiesMemo(Generic[V]):
    """IdentityMemo for what several objects and a hashable `extra` make together: found by the
    objects' identities, each entry holding its objects. At most `size` entries, the oldest made
    going first; lookups take no lock, storing does."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: dict[tuple[Any, ...], tuple[tuple[Any, ...], V]] = {}
        self._lock = threading.Lock()
        _ALL.add(self)

    def get_or_make(self, objs: tuple[Any, ...], extra: Any, make: Callable[[], V]) -> V:
        key = (*map(id, objs), extra)
        hit = self._data.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], objs, strict=True)):
            return hit[1]
        value = make()
        with self._lock:
            self._data[key] = (objs, value)
            while len(self._data) > self.size:
                del self._data[next(iter(self._data))]
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class WeakIdentityMemo(Generic[V]):
    """What `make()` gave for some objects (and a hashable `extra`), found by the objects'
    identities and forgotten as soon as any of them is collected: a memo that keeps nothing alive,
    for values derived from a review's renders that several parts of the same review ask for.
    Thread-safe; two threads making the same entry at once both compute it."""

    def __init__(self) -> None:
        self._data: dict[tuple[Any, ...], tuple[tuple[weakref.ref[Any], ...], V]] = {}
        self._lock = threading.Lock()
        _ALL.add(self)

    def get_or_make(self, objs: tuple[Any, ...], extra: Any, make: Callable[[], V]) -> V:
        key = (*map(id, objs), extra)
        hit = self._data.get(key)
        if hit is not None and all(r() is o for r, o in zip(hit[0], objs, strict=True)):
            return hit[1]
        value = make()
        forget = functools.partial(self._forget, key)
        refs = tuple(weakref.ref(o, forget) for o in objs)
        with self._lock:
            self._data[key] = (refs, value)
        return value

    def _forget(self, key: tuple[Any, ...], _gone: weakref.ref[Any]) -> None:
        # Called as one of the objects is freed: its id cannot have been reused yet.
        with self._lock:
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


def clear_all() -> None:
    """Empty every bounded cache of the process (benchmarks measure a cold review)."""
    for cache in list(_ALL):
        cache.clear()
