"""A bare mirror per repository under DATA_DIR, fetched incrementally: the worker's source of truth.

git rather than the contents API: one fetch brings both sides of every open PR (`refs/pull/*/head`),
and the engine then reads objects locally. Over HTTPS the installation token travels as an HTTP
header in git's environment, never in the URL, the command line or a log.

A linked repository (one a PR's references name, bot/app/links.py) is a guest on this disk: its
mirror is refused past a size limit, stamped at each use, and removed once unused for a while. The
mirror of a repository the App reviews is never pruned.
"""

from __future__ import annotations

import base64
import fcntl
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from bot.errors import ChartReviewError
from bot.git.repo import GitError, GitRepo

log = logging.getLogger(__name__)

REFSPECS = (
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+refs/pull/*/head:refs/pull/*/head",
)
FETCH_TIMEOUT = 600.0
# A linked repository's mirror may hold this much (git's pack and loose objects); a larger one is
# refused, and removed unless the App also reviews that repository.
LINKED_MAX_BYTES = 200 * 1024 * 1024
# A linked mirror no review has used this long is removed at the next linked sync.
LINKED_UNUSED = timedelta(days=7)
# In a linked mirror's directory (git ignores it): its mtime is the mirror's last use as a link.
LINKED_STAMP = "chart-review-linked"


class MirrorError(ChartReviewError):
    """The repository could not be fetched; the message says why (never with the token)."""


class MirrorTooLarge(MirrorError):
    """A linked repository is larger than the mirrors' limit for linked repositories."""


class Mirrors:
    def __init__(
        self,
        root: Path,
        linked_max_bytes: int = LINKED_MAX_BYTES,
        linked_unused: timedelta = LINKED_UNUSED,
    ) -> None:
        self.root = root
        self.linked_max_bytes = linked_max_bytes
        self.linked_unused = linked_unused

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
        with _locked(path.with_suffix(".lock")):
            # Reviewed here now: no longer a guest that a prune may remove.
            (path / LINKED_STAMP).unlink(missing_ok=True)
            return _fetch(path, clone_url, token, want)

    def sync_linked(self, full_name: str, clone_url: str, token: str | None) -> GitRepo:
        """The mirror of a repository a review links to, within `linked_max_bytes`
        (MirrorTooLarge past it); other linked mirrors unused for `linked_unused` are removed."""
        path = self.path(full_name)
        self.prune_linked(keep=path)
        with _locked(path.with_suffix(".lock")):
            stamp = path / LINKED_STAMP
            reviewed = _healthy(path) and not stamp.exists()  # the App's own mirror of it
            repo = _fetch(path, clone_url, token, ())
            try:
                self.check_linked_size(full_name, _object_bytes(path))
            except MirrorTooLarge:
                if not reviewed:
                    shutil.rmtree(path)
                raise
            if not reviewed:
                stamp.touch()
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
            with _try_locked(path.with_suffix(".lock")) as held:
                if held and stamp.exists() and _mtime(stamp) <= cutoff:
                    log.info("removing linked mirror %s: unused for %s", path, self.linked_unused)
                    shutil.rmtree(path)
                    removed.append(path)
        return removed


def _fetch(path: Path, clone_url: str, token: str | None, want: Sequence[str]) -> GitRepo:
    if not _healthy(path):
        _recreate(path)
    env = _git_env(clone_url, token)
    _git(path, env, "fetch", "--prune", "--quiet", clone_url, *REFSPECS)
    repo = GitRepo(path)
    missing = [sha for sha in want if repo.resolve(sha + "^{commit}") is None]
    if missing:
        # A head GitHub has not published under refs/pull yet: fetch it by id.
        _git(path, env, "fetch", "--quiet", clone_url, *missing)
    return repo


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return time.time()  # removed meanwhile: as good as just used


def _object_bytes(path: Path) -> int:
    """What git's objects take on disk: packs and loose objects (`git count-objects -v`, KiB)."""
    proc = subprocess.run(
        ["git", "-C", str(path), "count-objects", "-v"],
        capture_output=True,
        text=True,
        env=_git_env("", None),
    )
    if proc.returncode != 0:
        raise MirrorError(f"git count-objects failed in {path.name}")
    fields = dict(line.split(": ", 1) for line in proc.stdout.splitlines() if ": " in line)
    return sum(int(fields.get(key, "0")) for key in ("size", "size-pack")) * 1024


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """One fetch per mirror at a time across every worker process on this machine."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _try_locked(lock_path: Path) -> Iterator[bool]:
    """The mirror's lock if nobody holds it (True), else at once False: a prune never waits."""
    with lock_path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _healthy(path: Path) -> bool:
    if not (path / "HEAD").is_file():
        return False
    proc = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--is-bare-repository"],
        capture_output=True,
        text=True,
    )
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def _recreate(path: Path) -> None:
    if path.exists():
        log.warning("mirror %s is damaged; rebuilding it", path)
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _git(path.parent, _git_env("", None), "init", "--quiet", "--bare", str(path))


def _git_env(clone_url: str, token: str | None) -> dict[str, str]:
    env = {
        **os.environ,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "LC_ALL": "C",
    }
    if token and clone_url.startswith(("https://", "http://")):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        # GIT_CONFIG_* keeps the header out of argv (visible in `ps`) and out of the repo's config.
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraHeader",
            GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}",
        )
    return env


def _git(cwd: Path, env: dict[str, str], *args: str) -> None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=FETCH_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise MirrorError(f"git {args[0]} timed out after {FETCH_TIMEOUT:.0f} s") from None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise MirrorError(f"git {args[0]} failed: {lines[-1] if lines else proc.returncode}")


__all__ = ["GitError", "MirrorError", "MirrorTooLarge", "Mirrors"]
