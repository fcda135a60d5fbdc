"""Helm in a pool of long-lived render processes, each render under a wall-clock, a CPU-time and a
memory limit: charts come from untrusted PRs, and a template can loop for ever or build a gigabyte
string. A process that exceeds a limit is killed (or killed itself) and replaced; the render ends as
a RenderFailure naming the limit, which the render check (checks/render.py) turns into a finding
for that side and profile.

Processes are started with fork+exec (subprocess), never a bare fork of this threaded process, and
get only the environment Helm needs: no GitHub key or webhook secret is in reach of a template.

`render_linted` also has the process lint the chart (bot/render/lint.py) after the render, in the
same request, under limits of its own: each process has a private scratch directory for it."""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.render.base import RENDER_WORKERS, RenderFailure, values_json
from bot.render.child import frame
from bot.render.lint import LINT_VERSION, Linted, LintEntry, unfinished
from bot.render.probe import probe_kube_version
from bot.render.render_process import (
    EXIT_SECONDS,
    STARTUP_SECONDS,
    RenderProcess,
    SandboxLimits,
    Stopped,
    manifests_of,
)

log = logging.getLogger(__name__)


class SandboxedHelm:
    """The Renderer protocol over a pool of `workers` render processes, started on first use."""

    def __init__(self, limits: SandboxLimits | None = None, workers: int = RENDER_WORKERS) -> None:
        from importlib.metadata import version as package_version  # only where one renders

        self.limits = limits or SandboxLimits()
        # In the cache key: a render that failed on a limit may pass under another.
        self.version = (
            f"helm-python-sdk/{package_version('helm-python-sdk')} sandbox "
            f"cpu={self.limits.cpu_seconds}s memory={self.limits.memory_bytes} {LINT_VERSION}"
        )
        self._workers = workers
        self._default: str | None = None  # Helm's compiled-in Kubernetes version, once read
        self._idle: list[RenderProcess] = []
        self._all: set[RenderProcess] = set()
        self._cond = threading.Condition()
        self._closed = False
        # Run at exit too, so no render process outlives the bot.
        self._finalizer = weakref.finalize(self, _close_all, self._all, self._cond)

    def render(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        request = _request(archive, values, release, namespace, capabilities, lint=False)
        process = self._checkout()
        healthy = False
        try:
            manifests = process.render(request)
            healthy = True
            return manifests
        except RenderFailure:
            healthy = True
            raise
        except Stopped as stopped:
            raise _replaced(process, stopped) from None
        finally:
            self._checkin(process, healthy)

    def render_linted(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> Linted:
        """One request renders and lints. A render stopped by a limit is not linted (lint None); a
        lint stopped by one keeps the render and says so as a lint warning."""
        request = _request(archive, values, release, namespace, capabilities, lint=True)
        process = self._checkout()
        healthy = False
        replies = process.replies(request, 2)
        try:
            try:
                manifests, error = _outcome(next(replies))
            except Stopped as stopped:
                failure = _replaced(process, stopped)
                return Linted(None, failure, None, transient=failure.transient)
            try:
                entries = tuple(LintEntry.from_json(e) for e in next(replies)["lint"])
            except Stopped as stopped:
                failure = _replaced(process, stopped)
                return Linted(manifests, error, unfinished(failure), transient=failure.transient)
            healthy = True
            return Linted(manifests, error, entries)
        finally:
            self._checkin(process, healthy)

    def lint_alone(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> Linted:
        """The lint of a render made before, without rendering again: one reply, the lint's."""
        request = _request(
            archive, values, release, namespace, capabilities, lint=True, render=False
        )
        process = self._checkout()
        healthy = False
        try:
            try:
                (reply,) = process.replies(request, 1)
            except Stopped as stopped:
                failure = _replaced(process, stopped)
                return Linted(None, None, unfinished(failure), transient=failure.transient)
            healthy = True
            return Linted(None, None, tuple(LintEntry.from_json(e) for e in reply["lint"]))
        finally:
            self._checkin(process, healthy)

    def start(self) -> None:
        """Start the pool's processes now rather than at the first renders, without waiting for
        them: a command that reads history before it renders (replay) has them loaded by then,
        where each first render otherwise waited ~0.3 s for Python and Helm to load."""
        with self._cond:
            while len(self._all) < self._workers and not self._closed:
                process = RenderProcess(self.limits)
                self._all.add(process)
                self._idle.append(process)

    def default_kube_version(self) -> str | None:
        """Every render process runs the same Helm, so read once (a failure, maybe a passing one
        on a busy machine, is asked again next time)."""
        if self._default is None:
            self._default = probe_kube_version(self.render)
        return self._default

    def pids(self) -> list[int]:
        with self._cond:
            return sorted(p.pid for p in self._all)

    def close(self) -> None:
        with self._cond:
            self._closed = True
        self._finalizer()

    def __enter__(self) -> SandboxedHelm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _checkout(self) -> RenderProcess:
        while True:
            process, fresh = self._take()
            # Looked at outside the lock: reading /proc is a system call, and every other render
            # thread would wait on the lock meanwhile.
            if fresh or not process.ended():
                return process
            # Ended while idle (killed from outside): not this render's doing, so replaced.
            with self._cond:
                self._all.discard(process)
                self._cond.notify()
            process.close(grace=0)

    def _take(self) -> tuple[RenderProcess, bool]:
        """An idle process, else a new one (True) where the pool has room; waits for one."""
        # A render holds its process for at most this long (start, render, exit, each bounded), so
        # a pool that gave none back for so long is stuck, not busy.
        held = STARTUP_SECONDS + self.limits.wall_seconds + 2 * EXIT_SECONDS
        with self._cond:
            while not self._idle and len(self._all) >= self._workers:
                if not self._cond.wait(held):
                    raise RenderFailure(
                        f"no render process became free in {held:g} s", transient=True
                    )
            if self._closed:
                raise RenderFailure("the renderer is shut down", transient=True)
            if self._idle:
                return self._idle.pop(), False
            process = RenderProcess(self.limits)
            self._all.add(process)
            return process, True

    def _checkin(self, process: RenderProcess, healthy: bool) -> None:
        if not healthy:
            process.close(grace=0)
        with self._cond:
            if healthy and not self._closed:
                self._idle.append(process)
            else:
                self._all.discard(process)
            self._cond.notify()


def _request(
    archive: bytes,
    values: Mapping[str, Any],
    release: str,
    namespace: str,
    capabilities: Capabilities,
    lint: bool,
    render: bool = True,
) -> bytes:
    header = {
        "release": release,
        "namespace": namespace,
        "kube_version": capabilities.kube_version,
        "api_versions": list(capabilities.api_versions),
        "lint": lint,
        "render": render,
    }
    return frame(json.dumps(header).encode(), values_json(values).encode(), archive)


def _outcome(reply: Mapping[str, Any]) -> tuple[dict[str, Any] | None, RenderFailure | None]:
    try:
        return manifests_of(reply), None
    except RenderFailure as failure:
        return None, failure


def _replaced(process: RenderProcess, stopped: Stopped) -> RenderFailure:
    log.warning("render process %s replaced: %s", process.pid, stopped.failure.message)
    return stopped.failure


def _close_all(processes: set[RenderProcess], cond: threading.Condition) -> None:
    with cond:
        doomed = list(processes)
        processes.clear()
    for process in doomed:
        process.close()
