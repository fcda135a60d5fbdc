"""Where the memos keep their entries: a `Memos` store, one per owner of resources (the command
line's, the worker's, the Action's, each built by its composition root in bot/charts/resources.py).

A memo is declared where its facts are (bot/lru.py's classes, at module level beside the code they
serve: their size and weight are that module's to know); its entries live in the store of the review
running, which the engine sets for the review's duration (`Memos.active`) in a context variable.
The pools copy the submitting context into their threads, so what a review starts sees its store.
Code run outside any review (a unit test of one function, a command that reviews nothing) finds
the process's store, `PROCESS_MEMOS`.

A memo is a cache of a pure function of its key: code that somehow ran outside its review's context
would only miss (or hit another store's entry for the same key, which is as right), never be
wrong. So two engines in one process share no entry, yet nothing needs the store handed to it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, TypeVar


class Held(Protocol):
    """What a memo keeps in one store: its entries, which a store can count and empty."""

    def clear(self) -> None: ...

    def __len__(self) -> int: ...


H = TypeVar("H", bound=Held)


class Memos:
    """Every memo's entries for one owner. Keyed weakly by the memo, so that a memo made with an
    object (a repository's listings, by GitRepo) goes with that object, entries and all."""

    def __init__(self) -> None:
        self._held: weakref.WeakKeyDictionary[object, Held] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def held(self, memo: object, fresh: Callable[[], H]) -> H:
        """`memo`'s entries here, made empty by `fresh` on its first use in this store. Called
        only when a memo meets a store other than the one it last used (bot/lru.py), so the lock
        and the weak dictionary stay off the lookups' path."""
        with self._lock:
            found = self._held.get(memo)
            if found is None:
                found = self._held[memo] = fresh()
            return found  # type: ignore[return-value]  # made by this memo's own `fresh`

    def entries(self, memo: object) -> int:
        """How many entries `memo` holds in this store (0: never used here)."""
        with self._lock:
            found = self._held.get(memo)
        return 0 if found is None else len(found)

    def clear(self) -> None:
        """Empty every memo's entries here, in place: a memo still pointing at its entries in this
        store then finds them empty, never stale."""
        with self._lock:
            held = list(self._held.values())
        for entries in held:
            entries.clear()

    @contextmanager
    def active(self) -> Iterator[Memos]:
        """This store, for the memos used in this context (and in the pools' threads it starts)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)


# The store of code run outside any review; a process-default engine's (bot/charts/resources.py).
PROCESS_MEMOS = Memos()
_CURRENT: ContextVar[Memos] = ContextVar("chart_review_memos", default=PROCESS_MEMOS)
# The store in use here: read on every memo lookup, so the bound method, not a function around it.
current_memos = _CURRENT.get
