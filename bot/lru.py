"""A bounded least-recently-used map and identity memos: the memos of a long-lived worker that
reviews untrusted charts, where an unbounded cache is a memory leak an attacker can drive.

Each memo is declared once, where its facts are; its entries live in the current `Memos` store
(bot/memos.py), so that engines built with different resources share none. A memo remembers the
store it last used and its entries there: a lookup costs one context-variable read and one identity
comparison more than a bare dict's, and only a memo meeting another store looks it up."""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from bot.memos import Held, Memos, current_memos

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")
H = TypeVar("H", bound=Held)


class _Entries(Generic[K, V]):
    """A BoundedCache's entries in one store, with their total weight and the lock that guards
    changing them."""

    __slots__ = ("data", "lock", "total")

    def __init__(self) -> None:
        self.data: OrderedDict[K, V] = OrderedDict()
        self.lock = threading.Lock()
        self.total = 0

    def clear(self) -> None:
        with self.lock:
            self.data.clear()
            self.total = 0

    def __len__(self) -> int:
        return len(self.data)


class _Table:
    """An identity memo's entries in one store; storing takes the lock, looking up does not."""

    __slots__ = ("data", "lock")

    def __init__(self) -> None:
        self.data: dict[Any, Any] = {}
        self.lock = threading.Lock()

    def clear(self) -> None:
        with self.lock:
            self.data.clear()

    def __len__(self) -> int:
        return len(self.data)


class _Stored(Generic[H]):
    """A memo whose entries are in the current store: `_here()` finds them."""

    def __init__(self, fresh: Callable[[], H]) -> None:
        self._fresh = fresh
        # The store last used and the entries there, as one tuple: assigned whole, so a thread
        # reading it while another switches stores sees one pair or the other, never a mix.
        self._last: tuple[Memos | None, Any] = (None, None)

    def _here(self) -> H:
        seen, held = self._last
        memos = current_memos()
        return held if seen is memos else self._switch(memos)

    def _switch(self, memos: Memos) -> H:
        held = memos.held(self, self._fresh)
        self._last = (memos, held)
        return held

    def clear(self) -> None:
        """Empty this memo's entries in the current store."""
        self._here().clear()

    def __len__(self) -> int:
        return len(self._here())


class BoundedCache(_Stored[_Entries[K, V]]):
    """At most `size` entries, or with `weight`, entries weighing at most `size` in all (e.g. bytes);
    the least recently used goes first. Thread-safe."""

    def __init__(self, size: int, weight: Callable[[V], int] | None = None) -> None:
        super().__init__(_Entries)
        self.size = size
        self._weight = weight

    def get(self, key: K) -> V | None:
        # Without the lock: a review asks tens of thousands of times (tree levels, YAML leaves),
        # and the lock cost more than the lookup. Each OrderedDict call is atomic under the GIL,
        # and `put` (which holds the lock) is the one to change what is held or its weight; an
        # entry evicted between the two calls is simply not moved. The store is found inline
        # (as `_here` does): a method call would cost the lookup a third more.
        seen, entries = self._last
        memos = current_memos()
        if seen is not memos:
            entries = self._switch(memos)
        data = entries.data
        value = data.get(key)
        if value is not None:
            try:
                data.move_to_end(key)
            except KeyError:
                return value  # evicted meanwhile: there is nothing to move
        return value

    def put(self, key: K, value: V) -> None:
        entries = self._here()
        with entries.lock:
            self._insert(entries, key, value)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The cached value, else `make()`'s, remembered (computed outside the lock). Two threads
        that make the same key at once both get the first one stored: what callers share by
        identity (parsed YAML, whose objects later memos key by `id`) is then one object."""
        value = self.get(key)
        if value is not None:
            return value
        made = make()
        entries = self._here()
        with entries.lock:
            kept = entries.data.get(key)
            if kept is not None:
                return kept
            self._insert(entries, key, made)
        return made

    def _insert(self, entries: _Entries[K, V], key: K, value: V) -> None:
        """`value` under `key`, the least recently used entries evicted past the size. Holding
        `entries.lock`."""
        data, weight = entries.data, self._weight
        if weight is None:
            data[key] = value
            data.move_to_end(key)
            while len(data) > self.size:
                data.popitem(last=False)
            return
        old = data.get(key)
        entries.total += weight(value) - (0 if old is None else weight(old))
        data[key] = value
        data.move_to_end(key)
        while data and entries.total > self.size:
            _, gone = data.popitem(last=False)
            entries.total -= weight(gone)

    def weight(self) -> int:
        """What the entries held in the current store weigh (with no `weight`, their count)."""
        entries = self._here()
        return entries.total if self._weight is not None else len(entries)

    def held_keys(self) -> list[K]:
        """The keys held in the current store, the least recently used first."""
        entries = self._here()
        with entries.lock:
            return list(entries.data)


class IdentityMemo(_Stored[_Table], Generic[T, V]):
    """What `make(obj)` gave, found by the object's identity: for parsed YAML, which identical text
    shares between profiles and sides, identity is one lookup where equality would walk the whole
    object. Each entry holds its object, so no other object can take its id while it is remembered.
    The objects must not change once seen (rendered manifests are read-only).

    At most `size` entries, the oldest made going first. A lookup takes no lock (a check asks
    thousands of times per review, and a dict's get is atomic); only storing does. Two threads
    making the same entry at once both compute it, and either result is right."""

    def __init__(self, size: int) -> None:
        super().__init__(_Table)
        self.size = size

    def get_or_make(self, obj: T, make: Callable[[T], V]) -> V:
        seen, table = self._last
        memos = current_memos()
        if seen is not memos:
            table = self._switch(memos)
        hit = table.data.get(id(obj))
        if hit is not None and hit[0] is obj:
            value: V = hit[1]
            return value
        value = make(obj)
        with table.lock:
            table.data[id(obj)] = (obj, value)
            while len(table.data) > self.size:
                del table.data[next(iter(table.data))]
        return value


class IdentitiesMemo(_Stored[_Table], Generic[V]):
    """IdentityMemo for what several objects and a hashable `extra` make together: found by the
    objects' identities, each entry holding its objects. At most `size` entries, the oldest made
    going first; lookups take no lock, storing does."""

    def __init__(self, size: int) -> None:
        super().__init__(_Table)
        self.size = size

    def get_or_make(self, objs: tuple[Any, ...], extra: Any, make: Callable[[], V]) -> V:
        key = (*map(id, objs), extra)
        table = self._here()
        hit = table.data.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], objs, strict=True)):
            value: V = hit[1]
            return value
        value = make()
        with table.lock:
            table.data[key] = (objs, value)
            while len(table.data) > self.size:
                del table.data[next(iter(table.data))]
        return value


class WeakIdentityMemo(_Stored[_Table], Generic[V]):
    """What `make()` gave for some objects (and a hashable `extra`), found by the objects'
    identities and forgotten as soon as any of them is collected: a memo that keeps nothing alive,
    for values derived from a review's renders that several parts of the same review ask for.
    Thread-safe; two threads making the same entry at once both compute it."""

    def __init__(self) -> None:
        super().__init__(_Table)

    def get_or_make(self, objs: tuple[Any, ...], extra: Any, make: Callable[[], V]) -> V:
        key = (*map(id, objs), extra)
        table = self._here()
        hit = table.data.get(key)
        if hit is not None and all(r() is o for r, o in zip(hit[0], objs, strict=True)):
            value: V = hit[1]
            return value
        value = make()
        # The callback names the table, not the memo: a store's entries keep no memo alive.
        forget = functools.partial(_forget, table, key)
        refs = tuple(weakref.ref(o, forget) for o in objs)
        with table.lock:
            table.data[key] = (refs, value)
        return value


def _forget(table: _Table, key: tuple[Any, ...], _gone: weakref.ref[Any]) -> None:
    # Called as one of the objects is freed: its id cannot have been reused yet.
    with table.lock:
        table.data.pop(key, None)
