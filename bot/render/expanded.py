"""Chart archives unpacked once for `helm lint`, which takes a path: given the archive, Helm unpacks
it into a directory of its own at every lint, and a side's profiles are linted one after another
with the same archive. Kept here, each side is unpacked once (by Helm's own `expand`, as its lint
would) and every profile linted from the directory.

The directories live in one private temp directory (under TMPDIR: a render process's scratch
directory, the one it may write) and are named as Helm names its own (`helm-lint<N>`), so that a
message naming a file there reads as it did (bot/render/lint.py takes the prefix out). At most
KEPT archives are kept: the two sides of the chart being linted."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

KEPT = 2
ARCHIVE_NAME = "chart.tgz"


class ExpandedCharts:
    def __init__(self, helm: Any) -> None:
        self._helm = helm
        self._root: str | None = None
        # archive digest -> [the chart's directory (None: Helm could not unpack it), lints using it]
        self._dirs: OrderedDict[str, list[Any]] = OrderedDict()
        self._made = 0
        self._lock = threading.Lock()

    @contextmanager
    def directory(self, archive: bytes) -> Iterator[str | None]:
        """The chart's directory, unpacked from `archive`, for as long as the caller lints it
        (None where Helm cannot unpack it: its lint of the archive then says why, as before). A
        directory in use is never removed: lints run side by side where Helm runs in-process."""
        key = hashlib.sha256(archive).hexdigest()
        with self._lock:
            entry = self._dirs.get(key)
            if entry is None:
                entry = self._dirs[key] = [self._expand(archive), 0]
            self._dirs.move_to_end(key)
            entry[1] += 1
        try:
            yield entry[0]
        finally:
            with self._lock:
                entry[1] -= 1
                self._evict()

    def _evict(self) -> None:
        idle = [k for k, (_, users) in self._dirs.items() if not users]
        for key in idle[: max(len(self._dirs) - KEPT, 0)]:
            found, _ = self._dirs.pop(key)
            if found is not None:
                shutil.rmtree(os.path.dirname(found), ignore_errors=True)

    def _expand(self, archive: bytes) -> str | None:
        if self._root is None or not os.path.isdir(self._root):
            self._root = tempfile.mkdtemp(prefix="lint-")
        self._made += 1
        into = os.path.join(self._root, f"helm-lint{self._made}")
        os.mkdir(into, 0o700)
        path = os.path.join(self._root, ARCHIVE_NAME)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(archive)
        try:
            self._helm.expand(into, path)
        except self._helm.HelmError:
            shutil.rmtree(into, ignore_errors=True)
            return None
        finally:
            os.unlink(path)
        charts = os.listdir(into)
        return os.path.join(into, charts[0]) if len(charts) == 1 else None

    def close(self) -> None:
        with self._lock:
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
            self._root = None
            self._dirs.clear()
