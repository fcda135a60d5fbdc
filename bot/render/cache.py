"""The content-addressed render cache: same chart tree, same values, same renderer → same output.

On disk it is bounded: its entries take at most `max_bytes`, the least recently used removed first.
An entry's mtime is its last use (touched at each hit), so the order survives a restart and is
shared by every process on the directory. The cache is an optimisation, never a reason for a review
to fail: a write that fails (a full disk) removes its temp file, is logged, and the render still
goes to the review.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.render.base import RenderFailure
from bot.render.lint import LintEntry

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 512 * 2**20  # RENDER_CACHE_MAX_MB: a chart's render is tens of KB
# Renders kept in this process's memory, by the size of their manifests: a chart of large CRDs or
# configs renders megabytes a profile, so a count alone bounds nothing (a replay of
# opentelemetry-collector's changes held 92 MB in 363 entries).
DEFAULT_MEMORY_BYTES = 64 * 2**20
ENTRY_SUFFIX, TMP_SUFFIX = ".json", ".tmp"
# A write takes milliseconds: a temp file this old was left by a process that died writing it.
STALE_TMP_SECONDS = 60.0
# Other processes on the directory add entries this one does not see: it recounts the directory
# whenever its own count reaches the cap, and at least this often.
RESCAN_SECONDS = 60.0
# A full cache evicts down to this share of its cap, so that it does not recount at every write.
LOW_WATER = 0.9


@dataclass(frozen=True)
class CacheKey:
    """Content address of a render: same chart tree, same values, same renderer, same capabilities
    (Kubernetes and API versions) → same output."""

    chart_tree: str
    values_id: str
    renderer: str
    release: str
    namespace: str
    capabilities: str = ""  # Capabilities.cache_id: empty for the renderer's defaults

    @property
    def digest(self) -> str:
        parts = (self.chart_tree, self.values_id, self.renderer, self.release, self.namespace)
        # Only when set, so that the renders cached before capabilities existed keep their address.
        raw = "\0".join((*parts, self.capabilities) if self.capabilities else parts)
        return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class CachedRender:
    manifests: Mapping[str, str] | None
    error: RenderFailure | None
    lint: tuple[LintEntry, ...] | None = None  # None: not linted (bot/render/lint.py)


class RenderCache:
    """In memory always; on disk too when given a directory (shared by every review on a machine),
    within `max_bytes` there."""

    def __init__(
        self,
        directory: Path | None = None,
        max_entries: int = 512,
        max_bytes: int = DEFAULT_MAX_BYTES,
        memory_bytes: int = DEFAULT_MEMORY_BYTES,
    ) -> None:
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self._dir = directory
        # Least recently used first, with the bytes each holds.
        self._mem: OrderedDict[str, tuple[CachedRender, int]] = OrderedDict()
        self._max = max_entries
        self._memory_bytes, self._in_memory = memory_bytes, 0
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        # The entries on disk, least recently used first, and their sizes in bytes.
        self._files: OrderedDict[str, int] = OrderedDict()
        self._pending = 0  # bytes this process is writing now: reserved, not yet in _files
        self._bytes = 0  # sum(_files) + _pending
        self._scanned = 0.0
        if directory is not None:
            try:
                directory.mkdir(parents=True, exist_ok=True)
                with self._lock:
                    self._rescan()
            except OSError as exc:
                log.warning("render cache %s unusable, memory only: %s", directory, _why(exc))
                self._dir = None

    @property
    def disk_bytes(self) -> int:
        """What this process counts on disk: its entries and the writes it has in flight."""
        return self._bytes

    def get(self, key: CacheKey) -> CachedRender | None:
        digest = key.digest
        with self._lock:
            entry = self._mem.get(digest)
            if entry is not None:
                self._mem.move_to_end(digest)
        hit = entry[0] if entry is not None else None
        if self._dir is None:
            return hit
        if hit is not None:
            self._touch(digest, None)
            return hit
        try:
            raw = self._path(digest).read_bytes()
            found = _decode(json.loads(raw))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # absent, or not an entry this cache wrote: rendered again
        self._touch(digest, len(raw))
        self._remember(digest, found)
        return found

    def put(self, key: CacheKey, value: CachedRender) -> None:
        """Keeps `value`, unless it is a render without its lint where the same render with its
        lint is kept: a review asks a profile's render and its lint apart, at once, and which one
        ends last must not lose the lint (the next review would lint again)."""
        digest = key.digest
        if not self._remember(digest, value):
            return
        if self._dir is None:
            return
        self._store(digest, json.dumps(_encode(value)).encode(), linted=value.lint is not None)

    def _store(self, digest: str, data: bytes, linted: bool = True) -> None:
        """Write an entry within the cap. Any failure leaves no temp file and only logs."""
        assert self._dir is not None
        size = len(data)
        tmp = self._dir / f".{digest}.{os.getpid()}.{threading.get_ident()}{TMP_SUFFIX}"
        try:
            if not self._reserve(size):
                return
        except OSError as exc:
            log.warning("render cache %s: not stored: %s", self._dir, _why(exc))
            return
        try:
            tmp.write_bytes(data)
            with self._lock:
                self._pending -= size
                if not linted and self._linted(digest):
                    # Its lint came in meanwhile, and is on disk or on its way there.
                    self._bytes -= size
                    _unlink(tmp)
                    return
                tmp.replace(self._path(digest))
                self._bytes -= self._files.pop(digest, 0)
                self._files[digest] = size
        except OSError as exc:
            with self._lock:
                self._pending -= size
                self._bytes -= size
            _unlink(tmp)
            log.warning("render cache %s: not stored: %s", self._dir, _why(exc))

    def _reserve(self, size: int) -> bool:
        """Room for `size` more bytes, evicting the least recently used; False when even an empty
        cache has none (an entry larger than the cap, or writes in flight that fill it)."""
        with self._lock:
            if size > self.max_bytes:
                return False
            stale = time.monotonic() - self._scanned > RESCAN_SECONDS
            if stale or self._bytes + size > self.max_bytes:
                self._rescan()
            if self._bytes + size > self.max_bytes:
                while self._files and self._bytes + size > self.max_bytes * LOW_WATER:
                    digest, gone = self._files.popitem(last=False)
                    _unlink(self._path(digest))
                    self._bytes -= gone
            if self._bytes + size > self.max_bytes:
                return False
            self._pending += size
            self._bytes += size
            return True

    def _rescan(self) -> None:
        """Count the directory again, least recently used first, and remove the temp files that
        crashed writers left. Under self._lock."""
        assert self._dir is not None
        now = time.time()
        found: list[tuple[float, str, int]] = []
        with os.scandir(self._dir) as entries:
            for entry in entries:
                try:
                    stat = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue  # evicted meanwhile by another process
                name = entry.name
                if name.endswith(TMP_SUFFIX) and now - stat.st_mtime > STALE_TMP_SECONDS:
                    _unlink(Path(entry.path))
                elif name.endswith(ENTRY_SUFFIX) and entry.is_file(follow_symlinks=False):
                    found.append((stat.st_mtime, name[: -len(ENTRY_SUFFIX)], stat.st_size))
        found.sort()
        self._files = OrderedDict((digest, size) for _, digest, size in found)
        self._bytes = sum(self._files.values()) + self._pending
        self._scanned = time.monotonic()

    def _touch(self, digest: str, size: int | None) -> None:
        """A hit: the entry becomes the most recently used, here and (by its mtime) on disk."""
        try:
            os.utime(self._path(digest))
        except OSError:
            return  # not on disk (never stored, or evicted): nothing to keep
        with self._lock:
            if digest in self._files:
                self._files.move_to_end(digest)
            elif size is not None:  # another process's entry
                self._files[digest] = size
                self._bytes += size

    def _path(self, digest: str) -> Path:
        assert self._dir is not None
        return self._dir / f"{digest}{ENTRY_SUFFIX}"

    def _linted(self, digest: str) -> bool:
        """Whether the entry in memory holds a lint. Under self._lock."""
        entry = self._mem.get(digest)
        return entry is not None and entry[0].lint is not None

    def _remember(self, digest: str, value: CachedRender) -> bool:
        """Keeps `value` in memory; False where it would replace the same render with its lint."""
        size = _weight(value)
        with self._lock:
            if value.lint is None and self._linted(digest):
                return False
            old = self._mem.pop(digest, None)
            self._in_memory += size - (old[1] if old is not None else 0)
            self._mem[digest] = (value, size)
            while len(self._mem) > self._max or (
                self._in_memory > self._memory_bytes and len(self._mem) > 1
            ):
                _, (_, gone) = self._mem.popitem(last=False)
                self._in_memory -= gone
        return True


def _weight(value: CachedRender) -> int:
    """About what an entry holds in memory: its manifests' text, and a little for the rest."""
    manifests = value.manifests or {}
    return 256 + sum(len(name) + len(text) for name, text in manifests.items())


def _encode(value: CachedRender) -> dict[str, object]:
    """`lint` only when linted: a renderer that lints says so in its version (LINT_VERSION), which
    is in the key, so no entry written before lint existed is read as a render lint found clean."""
    err = value.error
    out: dict[str, object] = {
        "manifests": value.manifests,
        "error": {"message": err.message, "template": err.template, "line": err.line}
        if err
        else None,
    }
    if value.lint is not None:
        out["lint"] = [e.to_json() for e in value.lint]
    return out


def _decode(data: dict[str, Any]) -> CachedRender:
    err, lint = data.get("error"), data.get("lint")
    return CachedRender(
        data.get("manifests"),
        RenderFailure(err["message"], err.get("template"), err.get("line")) if err else None,
        tuple(LintEntry.from_json(e) for e in lint) if lint is not None else None,
    )


def _unlink(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("render cache: cannot remove %s: %s", path, _why(exc))


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)
