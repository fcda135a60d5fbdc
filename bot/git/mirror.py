"""A bare mirror per repository under DATA_DIR, fetched incrementally: the worker's source of truth.

git rather than the contents API: one fetch brings both sides of every open PR (`refs/pull/*/head`),
and the engine then reads objects locally. Over HTTPS the installation token travels as an HTTP
header in git's environment, never in the URL, the command line or a log (bot/git/fetch.py).

A linked repository (one a PR's references name, bot/app/links.py) is a guest on this disk: its
mirror is refused past a size limit, stamped at each use, and removed once unused for a while. The
mirror of a repository the App reviews is never pruned for that.

All mirrors together stay within `max_bytes` (MIRRORS_MAX_MB): each is stamped at every sync, and
past the cap the least recently used are removed whole (cloned again at their next review), never
one a review may still be reading. A fetch that fails, a full disk included, leaves no half-written
clone and no temporary pack behind.
"""

from __future__ import annotations

import fcntl
import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from bot.git.fetch import (
    MirrorDiskFull,
    MirrorError,
    disk_bytes,
    fetch_into,
    healthy,
    object_bytes,
    os_error,
)
from bot.git.repo import GitError, GitRepo

log = logging.getLogger(__name__)

# A linked repository's mirror may hold this much (git's pack and loose objects); a larger one is
# refused, and removed unless the App also reviews that repository.
LINKED_MAX_BYTES = 200 * 1024 * 1024
# A linked mirror no review has used this long is removed at the next linked sync.
LINKED_UNUSED = timedelta(days=7)
# In a linked mirror's directory (git ignores it): its mtime is the mirror's last use as a link.
LINKED_STAMP = "chart-review-linked"
# All mirrors together may hold this much on disk (MIRRORS_MAX_MB); past it the least recently
# used are removed.
MIRRORS_MAX_BYTES = 10 * 2**30
# A mirror synced this recently may be read by a review still running (a review reads it after the
# sync, without its lock): it is never removed to make room.
IN_USE = timedelta(hours=1)
# In every mirror's directory (git ignores it): its mtime is the mirror's last sync.
USE_STAMP = "chart-review-used"


class MirrorTooLarge(MirrorError):
    """A linked repository is larger than the mirrors' limit for linked repositories."""


class Mirrors:
    def __init__(
        self,
        root: Path,
        linked_max_bytes: int = LINKED_MAX_BYTES,
        linked_unused: timedelta = LINKED_UNUSED,
        max_bytes: int = MIRRORS_MAX_BYTES,
        in_use: timedelta = IN_USE,
    ) -> None:
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        self.root = root
        self.linked_max_bytes = linked_max_bytes
        self.linked_unused = linked_unused
        self.max_bytes = max_bytes
        self.in_use = in_use

    def path(self, full_name: str) -> Path:
        owner, _, name = full_name.partition("/")
        if not owner or not name or ".." in (owner, name) or "/" in name:
            raise MirrorError(f"not a repository name: {full_name!r}")
        return self.root / owner / f"{name}.git"

    def sync(
        self, full_name: str, clone_url: str, token: str | None, want: Sequence[str] = ()
    ) -> GitRepo:
        """The mirror of `full_name`, fetched so that it holds every branch, tag and PR head, and
        each commit in `want`. A mirror that git no longer recognises is rebuilt from scratch."""
        path = self.path(full_name)
        try:
            with _locked(path):
                # Reviewed here now: no longer a guest that a prune may remove.
                (path / LINKED_STAMP).unlink(missing_ok=True)
                repo = fetch_into(path, clone_url, token, want)
                _stamp(path, USE_STAMP)
                return repo
        finally:
            self.evict(keep=path)

    def sync_linked(self, full_name: str, clone_url: str, token: str | None) -> GitRepo:
        """The mirror of a repository a review links to, within `linked_max_bytes`
        (MirrorTooLarge past it); other linked mirrors unused for `linked_unused` are removed."""
        path = self.path(full_name)
        self.prune_linked(keep=path)
        try:
            with _locked(path):
                return self._fetch_linked(path, full_name, clone_url, token)
        finally:
            self.evict(keep=path)

    def _fetch_linked(
        self, path: Path, full_name: str, clone_url: str, token: str | None
    ) -> GitRepo:
        stamp = path / LINKED_STAMP
        reviewed = healthy(path) and not stamp.exists()  # the App's own mirror of it
        repo = fetch_into(path, clone_url, token, ())
        try:
            self.check_linked_size(full_name, object_bytes(path))
        except MirrorTooLarge:
            if not reviewed:
                shutil.rmtree(path)
            raise
        _stamp(path, USE_STAMP)
        if not reviewed:
            _stamp(path, LINKED_STAMP)
        return repo

    def check_linked_size(self, full_name: str, size_bytes: int) -> None:
        """MirrorTooLarge when a linked repository of `size_bytes` exceeds the limit: after a
        fetch, or before one with GitHub's estimate."""
        if size_bytes > self.linked_max_bytes:
            limit = self.linked_max_bytes / 2**20
            raise MirrorTooLarge(f"{full_name} is larger than {limit:g} MB, the limit for a link")

    def prune_linked(self, keep: Path | None = None) -> list[Path]:
        """Remove the linked mirrors unused for `linked_unused` (one in use is left alone)."""
        cutoff = time.time() - self.linked_unused.total_seconds()
        removed = []
        for stamp in sorted(self.root.glob(f"*/*.git/{LINKED_STAMP}")):
            path = stamp.parent
            if path == keep or _mtime(stamp) > cutoff:
                continue
            with _try_locked(path) as held:
                if held and stamp.exists() and _mtime(stamp) <= cutoff:
                    log.info("removing linked mirror %s: unused for %s", path, self.linked_unused)
                    shutil.rmtree(path)
                    removed.append(path)
        return removed

    def evict(self, keep: Path | None = None) -> list[Path]:
        """Remove the least recently used mirrors until all fit in `max_bytes`. `keep`, a mirror
        synced within `in_use` and one being fetched stay, even past the cap."""
        try:
            mirrors = sorted((_last_use(p), p) for p in self.root.glob("*/*.git") if p.is_dir())
            sizes = {path: disk_bytes(path) for _, path in mirrors}
        except OSError as exc:
            log.warning("mirrors under %s not measured: %s", self.root, exc)
            return []
        total = sum(sizes.values())
        cutoff = time.time() - self.in_use.total_seconds()
        removed = []
        for used, path in mirrors:
            if total <= self.max_bytes:
                break
            if path == keep or used > cutoff:
                continue
            with _try_locked(path) as held:
                if held and _last_use(path) <= cutoff:
                    log.info("removing mirror %s: the mirrors are over their cap", path)
                    shutil.rmtree(path, ignore_errors=True)
                    total -= sizes[path]
                    removed.append(path)
        if total > self.max_bytes:
            log.warning(
                "mirrors take %d MB, over their cap of %d MB: the others were used within %s",
                total >> 20,
                self.max_bytes >> 20,
                self.in_use,
            )
        return removed


def _stamp(path: Path, name: str) -> None:
    try:
        (path / name).touch()
    except OSError as exc:
        raise os_error(path, exc) from None


def _last_use(path: Path) -> float:
    """The mtime of the mirror's use stamp; for a mirror from before the stamps, of its last fetch."""
    for name in (USE_STAMP, "FETCH_HEAD", "HEAD"):
        try:
            return (path / name).stat().st_mtime
        except FileNotFoundError:
            continue
    return 0.0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return time.time()  # removed meanwhile: as good as just used


@contextmanager
def _locked(mirror: Path) -> Iterator[None]:
    """One fetch per mirror at a time across every worker process on this machine."""
    lock_path = mirror.with_suffix(".lock")
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        handle = lock_path.open("a")
    except OSError as exc:
        raise os_error(mirror, exc) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _try_locked(mirror: Path) -> Iterator[bool]:
    """The mirror's lock if nobody holds it (True), else at once False: a prune never waits."""
    with mirror.with_suffix(".lock").open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


__all__ = ["GitError", "MirrorDiskFull", "MirrorError", "MirrorTooLarge", "Mirrors"]
