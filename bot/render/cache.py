"""The content-addressed render cache: same chart tree, same values, same renderer → same output."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.render.base import RenderFailure


@dataclass(frozen=True)
class CacheKey:
    """Content address of a render: same chart tree, same values, same renderer → same output."""

    chart_tree: str
    values_id: str
    renderer: str
    release: str
    namespace: str

    @property
    def digest(self) -> str:
        raw = "\0".join(
            (self.chart_tree, self.values_id, self.renderer, self.release, self.namespace)
        )
        return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class CachedRender:
    manifests: Mapping[str, str] | None
    error: RenderFailure | None


class RenderCache:
    """In memory always; on disk too when given a directory (shared by every review on a machine)."""

    def __init__(self, directory: Path | None = None, max_entries: int = 512) -> None:
        self._dir = directory
        self._mem: dict[str, CachedRender] = {}
        self._max = max_entries
        self._lock = threading.Lock()
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def get(self, key: CacheKey) -> CachedRender | None:
        digest = key.digest
        with self._lock:
            hit = self._mem.get(digest)
        if hit is not None or self._dir is None:
            return hit
        path = self._dir / f"{digest}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        err = data.get("error")
        found = CachedRender(
            data.get("manifests"),
            RenderFailure(err["message"], err.get("template"), err.get("line")) if err else None,
        )
        self._remember(digest, found)
        return found

    def put(self, key: CacheKey, value: CachedRender) -> None:
        digest = key.digest
        self._remember(digest, value)
        if self._dir is None:
            return
        err = value.error
        payload = {
            "manifests": value.manifests,
            "error": {"message": err.message, "template": err.template, "line": err.line}
            if err
            else None,
        }
        tmp = self._dir / f".{digest}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(payload))
        tmp.replace(self._dir / f"{digest}.json")

    def _remember(self, digest: str, value: CachedRender) -> None:
        with self._lock:
            if len(self._mem) >= self._max:
                self._mem.pop(next(iter(self._mem)))
            self._mem[digest] = value
