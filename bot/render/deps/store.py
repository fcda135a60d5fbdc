"""The machine's dependency archives, by content: every review and every worker process on the
machine shares one directory, so a chart archive is fetched once.

    ROOT/blobs/sha256/HEX.tgz                    the archive, named by its sha256
    ROOT/refs/KEY/VERSION.json                   {repository, name, version, digest}
    ROOT/locks/KEY.lock                          held while KEY is being fetched

KEY is the sha256 of the repository URL and the chart's name. A chart version is immutable once
published, so a ref is never refreshed; a blob that no longer hashes to its name (a disk fault, a
hand edit) is treated as missing. Files appear by rename, so a reader never sees half of one, and
the lock (flock) makes two processes that want the same chart fetch it once between them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bot.render.deps.policy import normalise
from bot.render.deps.request import DependencyRequest, Fetched

ENV = "CHART_REVIEW_DEPENDENCY_CACHE"


def default_root() -> Path:
    """CHART_REVIEW_DEPENDENCY_CACHE, else the user's cache directory (XDG)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chart-review" / "dependencies"


class DependencyStore:
    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_root()

    def lookup(self, request: DependencyRequest, version: str) -> Fetched | None:
        ref = self._ref_dir(request) / f"{_safe(version)}.json"
        try:
            digest = json.loads(ref.read_text())["digest"]
            data = self._blob(digest).read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if _digest(data) != digest:
            return None
        return Fetched(data, version, digest)

    def versions(self, request: DependencyRequest) -> list[str]:
        """The versions of the chart already here: what an offline review can choose from."""
        try:
            return [p.stem for p in self._ref_dir(request).glob("*.json")]
        except OSError:
            return []

    def put(self, request: DependencyRequest, version: str, data: bytes) -> Fetched:
        digest = _digest(data)
        blob = self._blob(digest)
        if not blob.exists():
            _write(blob, data)
        record = {"repository": request.repository, "name": request.name, "version": version}
        ref = self._ref_dir(request) / f"{_safe(version)}.json"
        _write(ref, json.dumps({**record, "digest": digest}).encode())
        return Fetched(data, version, digest)

    @contextlib.contextmanager
    def locked(self, request: DependencyRequest) -> Iterator[None]:
        """Held by one process (and thread) at a time per chart, across the machine."""
        path = self.root / "locks" / f"{_key(request)}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _blob(self, digest: str) -> Path:
        return self.root / "blobs" / "sha256" / f"{digest.removeprefix('sha256:')}.tgz"

    def _ref_dir(self, request: DependencyRequest) -> Path:
        return self.root / "refs" / _key(request)


def _key(request: DependencyRequest) -> str:
    text = f"{normalise(request.repository)}\0{request.name}"
    return hashlib.sha256(text.encode()).hexdigest()


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _safe(version: str) -> str:
    """A version as a file name: SemVer allows only these characters anyway."""
    return "".join(c if c.isalnum() or c in ".-+_" else "_" for c in version)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
