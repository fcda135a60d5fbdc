"""What reviews run on that lives longer than one review: the thread pools and the memos' store.

A `Resources` is built by a composition root (the command line, the worker, the Action), sized from
its settings, and handed to the engine, which hands its pools on to the chart pipeline
(`RenderSettings.pools`) and makes its memos the current store while it reviews (bot/memos.py).
Nothing is made at import: a pool starts its threads on its first task, and `close()` ends them.
Two engines with different resources share no thread and no memo entry. An engine built without
any (most tests) uses the process's own, made on first use, with the memos' store current where it
reviews (the process's, unless the caller made another current).
"""

from __future__ import annotations

import contextvars
import functools
import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from bot.memos import PROCESS_MEMOS, Memos
from bot.render.base import RENDER_WORKERS

P = ParamSpec("P")
R = TypeVar("R")

# A chart's dependency fetches under way at once: a cold fetch is mostly waiting (a process
# starting, the network), and this many is also all a chart whose repository fails can cost it.
FETCHES_AT_ONCE = 4
# A git command is a process costing a millisecond or two, mostly spent waiting on it: this many
# of those that need only what is already known run at once, beside the review's own work.
GIT_THREADS = 4


@dataclass(frozen=True)
class Sizes:
    """How big the pools are. `render_workers`: renders under way at once, as many as the
    renderer's processes; `charts_ahead`: charts of one review started ahead of the one awaited."""

    render_workers: int = RENDER_WORKERS
    # Twice the workers keeps them all busy when charts have one profile or two, and bounds the
    # archives and values held in flight.
    charts_ahead: int = 2 * RENDER_WORKERS
    fetches_at_once: int = FETCHES_AT_ONCE
    git_threads: int = GIT_THREADS

    @classmethod
    def for_render_workers(cls, workers: int) -> Sizes:
        """The sizes that follow from the number of render processes."""
        return cls(render_workers=workers, charts_ahead=2 * workers)


class Pool:
    """A thread pool whose tasks run in a copy of the submitting context, so that a review's
    threads use its memos' store; its threads start with the first task."""

    _made = itertools.count(1)

    def __init__(self, name: str, workers: int) -> None:
        self.name, self.workers = name, workers
        # Numbered, so that two pools of one name tell their threads apart (`render-3_0`).
        self.prefix = f"{name}-{next(Pool._made)}"
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        task: Callable[[], R] = functools.partial(fn, *args, **kwargs)
        return self._started().submit(contextvars.copy_context().run, task)

    def _started(self) -> ThreadPoolExecutor:
        executor = self._executor
        if executor is None:
            with self._lock:
                if self._executor is None:
                    self._executor = ThreadPoolExecutor(
                        self.workers, thread_name_prefix=self.prefix
                    )
                executor = self._executor
        return executor

    def shutdown(self) -> None:
        """Its threads end once their tasks are done; a later task starts new ones."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


class Pools:
    """The review's thread pools, each sized from `sizes`."""

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes
        self.git = Pool("git", sizes.git_threads)
        # Twice as many threads as render processes (which bound the renders under way: the
        # sandbox's pool, the helm binary's semaphore). A thread does Python around its render
        # (the values, the archive, then parsing what came back): with one thread per process,
        # the process sat idle meanwhile. Over a 200-change prometheus-community replay, twice the
        # threads kept the render processes busy 2-4% more of the time for no more CPU in this
        # process (bench/replay_bench.py, alternating runs).
        self.render = Pool("render", 2 * sizes.render_workers)
        # Each waits on a chart's head lints, then starts its base's where they say something:
        # threads that only wait, so the review's checks run meanwhile. One per chart whose lint
        # is under way.
        self.lint = Pool("lint", sizes.charts_ahead)
        self.fetch = Pool("fetch", sizes.fetches_at_once)
        # Other open PRs' renders, one review's at a time per thread: each waits on the renders.
        self.others = Pool("other-prs", sizes.render_workers)
        # The command line's discovery of open PRs, beside the review's renders: its git queries
        # wait on git, and the renders on Helm.
        self.open_prs = Pool("open-prs", 1)

    def all(self) -> tuple[Pool, ...]:
        return (self.git, self.render, self.lint, self.fetch, self.others, self.open_prs)

    def shutdown(self) -> None:
        for pool in self.all():
            pool.shutdown()


class Resources:
    """The pools and the memos' store of one composition root; `close()` when done with them."""

    def __init__(self, sizes: Sizes | None = None, memos: Memos | None = None) -> None:
        self.sizes = sizes if sizes is not None else Sizes()
        self.pools = Pools(self.sizes)
        self.memos = memos if memos is not None else Memos()

    @contextmanager
    def active(self) -> Iterator[Resources]:
        """Its memos' store for what runs here, and in the threads its pools start from here."""
        with self.memos.active():
            yield self

    def close(self) -> None:
        """End the pools' threads and empty the memos."""
        self.pools.shutdown()
        self.memos.clear()

    def __enter__(self) -> Resources:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _ProcessResources(Resources):
    """The process's: default sizes; its memos are the store current where it reviews (the
    process's, unless the caller made another current), as code outside any review uses."""

    def __init__(self) -> None:
        super().__init__(Sizes(), PROCESS_MEMOS)

    @contextmanager
    def active(self) -> Iterator[Resources]:
        yield self


_PROCESS: Resources | None = None
_PROCESS_LOCK = threading.Lock()


def process_resources() -> Resources:
    """The resources of an engine built without any: made on first use, their pools' threads
    started on their first task, never closed (the interpreter's exit ends them)."""
    global _PROCESS
    with _PROCESS_LOCK:
        if _PROCESS is None:
            _PROCESS = _ProcessResources()
        return _PROCESS
