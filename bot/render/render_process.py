"""One render process: Helm loaded in a child started by fork+exec with only the environment Helm
needs, confined (bot/render/confine.py), asked one render (or render and lint) at a time under the
limits of SandboxLimits, killed and reported when it exceeds one. The pool that runs several and
replaces one that died is bot/render/sandbox.py."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import math
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bot.render.base import RenderFailure
from bot.render.child import EXIT_OUT_OF_MEMORY, read_reply

log = logging.getLogger(__name__)

# Loading Helm takes ~0.2 s; this only bounds a process that cannot start at all.
STARTUP_SECONDS = 30.0
# A process that closed its reply pipe is exiting, and one sent SIGKILL is gone at once: this only
# bounds a process that never does (stuck in the kernel). How long an exit takes decides nothing.
EXIT_SECONDS = 10.0
_CHUNK = 1 << 20
_LOG_TAIL = 16384
# What the Go runtime writes when an allocation or a goroutine stack exceeds what it may have.
_MEMORY_MARKERS = (b"out of memory", b"stack overflow", b"cannot allocate memory")
_ROOT = str(Path(__file__).resolve().parents[2])
# Signals a process raises on itself when it crashes; any other came from outside.
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL}


@dataclass(frozen=True)
class SandboxLimits:
    """Per render. `memory_bytes` is the address space a render may add to the loaded engine (the Go
    runtime alone reserves ~1.8 GB it never touches); a 200-template chart adds ~30 MB and takes
    ~0.1 s of CPU, so the defaults stop only runaway templates."""

    wall_seconds: float = 60.0
    cpu_seconds: int = 30
    memory_bytes: int = 1024 * 1024 * 1024

    @property
    def time_exceeded(self) -> str:
        return f"render exceeded its time limit ({self.wall_seconds:g} s of wall-clock time)"

    @property
    def cpu_exceeded(self) -> str:
        return f"render exceeded its time limit ({self.cpu_seconds} s of CPU time)"

    @property
    def memory_exceeded(self) -> str:
        return f"render exceeded its memory limit ({self.memory_bytes // 2**20} MiB)"


class Stopped(Exception):
    """The render process is gone or must go; `failure` says why, for the render's finding."""

    def __init__(self, failure: RenderFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _child_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "TZ") if key in os.environ}
    return {
        **env,
        "PYTHONPATH": _ROOT,
        "PYTHONDONTWRITEBYTECODE": "1",
        # The Go runtime's fatal errors (out of memory, stack overflow) without every goroutine's
        # stack.
        "GOTRACEBACK": "none",
        # One core per process: the pool is the parallelism. With a core each, the processes'
        # garbage collectors fought each other and the reviewing process: ~20% more CPU per render.
        "GOMAXPROCS": "1",
    }


_partial_said = threading.Event()


def _note_confinement(confinement: Mapping[str, Any]) -> None:
    """Once per process: a render process the kernel could not fully confine (no Landlock, no
    seccomp) still renders, behind the checks made before the sandbox; the log says so."""
    missing = confinement.get("missing") or []
    if missing and not _partial_said.is_set():
        _partial_said.set()
        log.warning("render processes are only partly confined: %s", "; ".join(map(str, missing)))


def _widen(fd: int) -> None:
    """A pipe of a megabyte where the system allows it (Linux, within `pipe-max-size`), not 64 KB:
    an archive or a reply of megabytes then crosses in a few writes, not a hundred, each waking
    the other process."""
    with contextlib.suppress(AttributeError, OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _CHUNK)


class RenderProcess:
    """One render process and its two pipes. Used by one thread at a time (the pool sees to it)."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        child_requests, self._requests = os.pipe()
        self._replies, child_replies = os.pipe()
        for fd in (self._requests, self._replies):
            _widen(fd)
        # Closed in close(): the log lives as long as the process.
        self._log: IO[bytes] = tempfile.TemporaryFile(prefix="chart-review-render-")  # noqa: SIM115
        # The one directory the process may write (mode 0700, this process's alone): lint's.
        self.scratch = tempfile.mkdtemp(prefix="chart-review-scratch-")
        args = [str(child_requests), str(child_replies), str(limits.cpu_seconds)]
        args += [str(limits.memory_bytes), self.scratch]
        self.proc = subprocess.Popen(
            # -P: no current directory on sys.path (the process runs in /).
            [sys.executable, "-P", "-m", "bot.render.child", *args],
            pass_fds=(child_requests, child_replies),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            env={**_child_env(), "TMPDIR": self.scratch},
            cwd="/",
        )
        os.close(child_requests)
        os.close(child_replies)
        os.set_blocking(self._requests, False)
        self._ready = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def render(self, request: bytes) -> dict[str, Any]:
        """Raises RenderFailure for a chart error, Stopped when the process is gone."""
        (reply,) = self.replies(request, 1)
        return manifests_of(reply)

    def replies(self, request: bytes, count: int) -> Iterator[dict[str, Any]]:
        """Sends a request and reads its `count` replies, each within the wall-clock limit of its
        own (a lint after the render has its own, as the child gives it its own CPU and memory).
        Raises Stopped when the process is gone."""
        if not self._ready:
            ready = read_reply(self._receive(time.monotonic() + STARTUP_SECONDS, starting=True))
            _note_confinement(ready.get("confinement") or {})
            self._ready = True
        mark = os.fstat(self._log.fileno()).st_size
        deadline = time.monotonic() + self.limits.wall_seconds
        self._send(request, deadline, mark)
        for _ in range(count):
            reply = read_reply(self._receive(deadline, mark=mark))
            yield reply
            deadline = time.monotonic() + self.limits.wall_seconds

    def _send(self, data: bytes, deadline: float, mark: int) -> None:
        view = memoryview(data)
        while view:
            self._wait(self._requests, deadline, mark, writable=True)
            try:
                view = view[os.write(self._requests, view[:_CHUNK]) :]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise Stopped(self._death(mark)) from None

    def _receive(self, deadline: float, mark: int = 0, starting: bool = False) -> bytes:
        head = self._read(8, deadline, mark, starting)
        return self._read(int.from_bytes(head, "big"), deadline, mark, starting)

    def _read(self, size: int, deadline: float, mark: int, starting: bool) -> bytes:
        buffer = bytearray()
        while len(buffer) < size:
            self._wait(self._replies, deadline, mark, starting=starting)
            chunk = os.read(self._replies, min(size - len(buffer), _CHUNK))
            if not chunk:
                raise Stopped(self._death(mark, starting))
            buffer += chunk
        return bytes(buffer)

    def _wait(
        self, fd: int, deadline: float, mark: int, writable: bool = False, starting: bool = False
    ) -> None:
        left = max(deadline - time.monotonic(), 0)
        # poll, not select: select() refuses a descriptor numbered past 1023, which a busy bot
        # process reaches. A closed other end counts as ready (POLLHUP, POLLERR): the read or
        # write that follows finds out.
        poller = select.poll()
        poller.register(fd, select.POLLOUT if writable else select.POLLIN)
        if poller.poll(math.ceil(left * 1000)):
            return
        self.kill()
        if self.proc.returncode not in (None, -signal.SIGKILL):
            # It ended by itself just as the time ran out (SIGKILL left the zombie as it was):
            # its own exit says why, not the clock.
            raise Stopped(self._death(mark, starting))
        if starting:
            raise Stopped(RenderFailure(self._not_started(mark), transient=True))
        # Over the wall clock but not the CPU limit: starved by load, so it may well pass next time.
        raise Stopped(RenderFailure(self.limits.time_exceeded, transient=True))

    def _death(self, mark: int, starting: bool = False) -> RenderFailure:
        """Why the process ended mid-request, from its exit status and what it wrote: evidence the
        process leaves, never how long anything took. The memory limit is named only on the child's
        own word (EXIT_OUT_OF_MEMORY from Python, the Go runtime's fatal error in the log); a signal
        from outside (an operator, the kernel's OOM killer under the machine's load) is named as
        such, and may not recur."""
        try:
            code: int | None = self.proc.wait(EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()
            code = None  # it closed its pipe but did not exit: our kill says nothing of why
        tail = os.pread(self._log.fileno(), _LOG_TAIL, mark)
        if starting:
            return RenderFailure(self._not_started(mark), transient=True)
        if code == -signal.SIGXCPU:
            return RenderFailure(self.limits.cpu_exceeded)
        if code == EXIT_OUT_OF_MEMORY or any(marker in tail for marker in _MEMORY_MARKERS):
            return RenderFailure(self.limits.memory_exceeded)
        last = tail.decode(errors="replace").strip().splitlines()[:1]
        log.warning("render process %s ended with %s: %s", self.pid, code, last)
        if code is None:
            return RenderFailure("the render process stopped answering", transient=True)
        if code < 0 and -code not in _CRASH_SIGNALS:
            return RenderFailure(f"the render process was killed (signal {-code})", transient=True)
        return RenderFailure(f"the render process crashed (exit status {code})", transient=True)

    def _not_started(self, mark: int) -> str:
        tail = os.pread(self._log.fileno(), _LOG_TAIL, mark).decode(errors="replace").strip()
        log.error("render process %s did not start: %s", self.pid, tail[-2000:])
        return "the render process did not start (see the bot's log)"

    def ended(self) -> bool:
        """Exited, or exiting: a process killed from outside shows its main thread a zombie at
        once, but cannot be reaped (poll() says running) until its other threads, Go's, have ended
        too, which takes a while on a loaded machine; it will never answer, so it counts as ended."""
        if self.proc.poll() is not None:
            return True
        try:
            fd = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY)
            try:
                stat = os.read(fd, 512)  # the state follows the name, which is at most 16 bytes
            finally:
                os.close(fd)
        except OSError:
            return False  # not Linux, or reaped meanwhile (then poll() says so next time)
        return stat.rpartition(b") ")[2][:1] == b"Z"

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(EXIT_SECONDS)
        except subprocess.TimeoutExpired:  # in an uninterruptible sleep: reaped by a later poll
            log.error("render process %s did not end %g s after SIGKILL", self.pid, EXIT_SECONDS)

    def close(self, grace: float = 1.0) -> None:
        """Closing the request pipe ends the process's loop; kill it if it is mid-render."""
        for fd in (self._requests, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill()
        self._log.close()
        # What a lint the process did not finish left behind.
        shutil.rmtree(self.scratch, ignore_errors=True)


def manifests_of(reply: Mapping[str, Any]) -> dict[str, Any]:
    """A render's reply: its manifests, or the chart's error raised as a RenderFailure."""
    if "error" in reply:
        err = reply["error"]
        raise RenderFailure(err["message"], err.get("template"), err.get("line"))
    manifests: dict[str, Any] = reply["manifests"]
    return manifests
