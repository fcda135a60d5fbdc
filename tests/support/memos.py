"""Cold memos for a test: what a fresh Resources gives a review (bot/memos.py), for tests of the
functions below the engine."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import pytest

from bot.memos import Memos

ColdMemos = Callable[[], Memos]


@pytest.fixture
def cold_memos() -> Iterator[ColdMemos]:
    """`cold_memos()`: from there to the end of the test, the memos keep their entries in a store
    of their own, empty to begin with; each call starts another. The process's store is left as
    it was."""
    with contextlib.ExitStack() as stack:
        yield lambda: stack.enter_context(Memos().active())
