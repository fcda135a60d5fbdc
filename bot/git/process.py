"""Running git for one repository: plain commands, streamed ones, and the long-lived `cat-file
--batch-command` that blobs, tree objects and ref lookups go through. What is asked of git is the
business of bot/git/listings.py (trees and blobs) and bot/git/revisions.py (refs and history)."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from bot.errors import ChartReviewError

# Requests go to the long-lived `cat-file` in chunks that fit in a pipe's buffer (64 KiB on Linux),
# so writing one never waits on git, which may be writing replies that are only read afterwards.
_BATCH_CHUNK_BYTES = 16 << 10


class GitError(ChartReviewError):
    """A git command failed; the message names the command and git's reason."""


# Every long-lived `cat-file` of this process, its repository's or one whose repository is gone:
# what close_all() ends, so that a command line leaves no git process of its own to whoever adopts
# orphans (a zombie under its init).
_BATCHES: set[subprocess.Popen[bytes]] = set()
_BATCHES_LOCK = threading.Lock()


def close_all() -> None:
    """Ends and reaps every long-lived git process this process started."""
    with _BATCHES_LOCK:
        batches = list(_BATCHES)
        _BATCHES.clear()
    for batch in batches:
        _end(batch)


def _end(batch: subprocess.Popen[bytes]) -> None:
    if batch.poll() is None:
        batch.kill()
    batch.wait()


class GitProcess:
    """The git processes of one repository on disk. Thread-safe: the long-lived `cat-file` is
    asked under `_lock`, which its callers hold."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._batch: subprocess.Popen[bytes] | None = None

    def _run(
        self, *args: str, check: bool = True, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=input,
            capture_output=True,
            env=_GIT_ENV,
        )
        if check and proc.returncode != 0:
            raise _failed(args[0], proc.returncode, proc.stderr)
        return proc

    def _out(self, *args: str) -> str:
        return self._run(*args).stdout.decode(errors="replace")

    def close(self) -> None:
        with self._lock:
            if self._batch is not None:
                with _BATCHES_LOCK:
                    _BATCHES.discard(self._batch)
                _end(self._batch)
                self._batch = None

    def _streamed(self, args: Sequence[str], separator: bytes) -> Iterator[str]:
        """The output of `git args`, in pieces ending at `separator`, each once git has written
        it; dropping the iterator stops git (a caller's loop that breaks does)."""
        proc = subprocess.Popen(
            ["git", "-C", str(self.path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_GIT_ENV,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            yield from _pieces(proc.stdout, separator)
            if proc.wait() != 0:
                raise _failed(args[0], proc.returncode, proc.stderr.read())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    def _read_objects(self, names: list[str], command: str = "") -> list[tuple[str, str, bytes]]:
        """Objects by name (id, type, content) through the long-lived `cat-file --batch`, requests
        pipelined in chunks small enough to sit in the pipe's buffer (so neither side can block the
        other). The caller holds the lock."""
        out: list[tuple[str, str, bytes]] = []
        if not names:
            return out
        batch = self._batch_process()
        assert batch.stdin is not None and batch.stdout is not None
        for chunk, request in _requests(b"contents", names):
            batch.stdin.write(request)
            batch.stdin.flush()
            missing = None
            for name in chunk:  # every reply is read, so the next request starts in step
                header = _found(batch.stdout.readline())
                if header is None:
                    missing = missing or name
                    continue
                out.append((header[0], header[1], batch.stdout.read(int(header[2]))))
                batch.stdout.read(1)  # the newline after each object
            if missing is not None:
                failed = f"git {command} failed: " if command else ""
                raise GitError(f"{failed}object {missing} is missing")
        return out

    def _object_infos(self, names: list[str]) -> list[tuple[str, str] | None]:
        """Objects by name (id, type) through the long-lived `cat-file`, None for one it does not
        find (or finds ambiguous). The caller holds the lock."""
        if not names:
            return []
        return [(h[0], h[1]) if h is not None else None for h in self._headers(names)]

    def _headers(self, names: list[str]) -> list[list[str] | None]:
        """`cat-file`'s reply header (id, type, size) for each name, None where it finds none, as
        the long-lived `cat-file` answers `info`. The caller holds the lock."""
        batch = self._batch_process()
        assert batch.stdin is not None and batch.stdout is not None
        out: list[list[str] | None] = []
        for chunk, request in _requests(b"info", names):
            batch.stdin.write(request)
            batch.stdin.flush()
            out += [_found(batch.stdout.readline()) for _ in chunk]
        return out

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            ended, self._batch = (
                self._batch,
                subprocess.Popen(
                    ["git", "-C", str(self.path), "cat-file", "--batch-command", "--buffer"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=_GIT_ENV,
                ),
            )
            with _BATCHES_LOCK:
                _BATCHES.discard(ended)
                _BATCHES.add(self._batch)
        return self._batch


def _requests(command: bytes, names: list[str]) -> Iterator[tuple[list[str], bytes]]:
    """`names` in chunks, each with its request for `cat-file --batch-command --buffer`: the
    command for each name, then `flush` (git holds its replies back until then, so they come in
    few writes rather than one per object)."""
    chunk: list[str] = []
    lines: list[bytes] = []
    size = 0
    for name in names:
        line = command + b" " + name.encode(errors="surrogateescape") + b"\n"
        if chunk and size + len(line) > _BATCH_CHUNK_BYTES:
            yield chunk, b"".join(lines) + b"flush\n"
            chunk, lines, size = [], [], 0
        chunk.append(name)
        lines.append(line)
        size += len(line)
    if chunk:
        yield chunk, b"".join(lines) + b"flush\n"


def _found(line: bytes) -> list[str] | None:
    """`cat-file`'s reply header as (id, type, size), or None for `<name> missing` (or
    `ambiguous`), whatever the name holds."""
    header = line.decode(errors="replace").split()
    return header if len(header) == 3 and header[2].isdigit() else None


def _pieces(stream: IO[bytes], separator: bytes) -> Iterator[str]:
    """What `stream` says, in pieces ending at `separator` (a log's records, a list's lines),
    each once it is whole; empty ones left out."""
    pending = b""
    while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
        *whole, pending = (pending + chunk).split(separator)
        for piece in whole:
            if text := piece.decode(errors="replace").strip("\n"):
                yield text
    if text := pending.decode(errors="replace").strip("\n"):
        yield text


def _failed(command: str, returncode: int, stderr: bytes) -> GitError:
    lines = stderr.decode(errors="replace").strip().splitlines()
    # git's own reason, not the usage text it may print after it.
    said = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    return GitError(f"git {command} failed: {said[-1] if said else 'exit ' + str(returncode)}")


# git must never prompt, page, or read the user's config in ways that change its output.
_GIT_ENV = {
    **os.environ,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
}
