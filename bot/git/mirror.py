"""A bare mirror per repository under DATA_DIR, fetched incrementally: the worker's source of truth.

git rather than the contents API: one fetch brings both sides of every open PR (`refs/pull/*/head`),
and the engine then reads objects locally. Over HTTPS the installation token travels as an HTTP
header in git's environment, never in the URL, the command line or a log.
"""

from __future__ import annotations

import base64
import fcntl
import logging
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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


class MirrorError(ChartReviewError):
    """The repository could not be fetched; the message says why (never with the token)."""


class Mirrors:
    def __init__(self, root: Path) -> None:
        self.root = root

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


__all__ = ["GitError", "MirrorError", "Mirrors"]
