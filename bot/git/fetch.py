"""git's side of a mirror: fetching into a bare repository, with the token in git's environment, and
nothing half-written left behind when a fetch fails.

A fetch that fails for want of space is the case to get right: git's refs move only once the
objects are in, so a mirror stays consistent, but the objects it did write (loose ones, or an
index-pack's `objects/pack/tmp_pack_*`) stay behind and keep the disk full for everyone else on it,
the queue included. They are removed; a clone that fails is removed whole.
"""

from __future__ import annotations

import base64
import errno
import logging
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from bot.errors import ChartReviewError
from bot.git.repo import GitError, GitRepo
from bot.textlines import git_lines

log = logging.getLogger(__name__)

REFSPECS = (
    "+refs/heads/*:refs/heads/*",
    "+refs/tags/*:refs/tags/*",
    "+refs/pull/*/head:refs/pull/*/head",
)
FETCH_TIMEOUT = 600.0
# In any of git's messages when a write fails for want of space (the last line is often only a
# consequence: "fatal: fetch-pack: invalid index-pack output").
NO_SPACE = "No space left on device"
# What a failed or killed fetch leaves in a mirror: unpack-objects' and index-pack's temporary
# files, the quarantine of incoming objects, and the lock files of the refs it was updating.
LEFTOVERS = (
    "objects/??/tmp_obj_*",
    "objects/pack/tmp_*",
    "objects/pack/.tmp-*",
    "objects/incoming-*",
    "objects/tmp_objdir-incoming-*",
    "*.lock",
    "refs/**/*.lock",
    # and those of a commit-graph write that failed
    "objects/info/commit-graph.lock",
    "objects/info/commit-graphs/tmp_graph_*",
    "objects/info/commit-graphs/*.lock",
)


class MirrorError(ChartReviewError):
    """The repository could not be fetched; the message says why (never with the token)."""


class MirrorDiskFull(MirrorError):
    """git could not write the mirror: the disk under DATA_DIR/mirrors is full."""


def fetch_into(path: Path, clone_url: str, token: str | None, want: Sequence[str]) -> GitRepo:
    """Fetch every branch, tag and PR head (and each commit in `want`) into the bare repository at
    `path`, created when missing or damaged. Under the mirror's lock: whatever a fetch left there
    is stale."""
    fresh = not healthy(path)
    try:
        if fresh:
            _recreate(path)
        else:
            remove_leftovers(path)  # of a fetch killed mid-way, before the lock was ours
        env = git_env(clone_url, token)
        run_git(path, env, "fetch", "--prune", "--quiet", clone_url, *REFSPECS)
        repo = GitRepo(path)
        missing = [sha for sha in want if repo.resolve(sha + "^{commit}") is None]
        if missing:
            # A head GitHub has not published under refs/pull yet: fetch it by id.
            run_git(path, env, "fetch", "--quiet", clone_url, *missing)
        write_commit_graph(path)
        return repo
    except (OSError, GitError, MirrorError) as exc:
        if fresh:
            shutil.rmtree(path, ignore_errors=True)
        else:
            _clean_after_failure(path, exc)
        if isinstance(exc, OSError):
            raise os_error(path, exc) from None
        raise


def write_commit_graph(path: Path) -> None:
    """Bring the mirror's commit-graph up to its refs: a new layer for the commits just fetched
    (`--split`: the older layers stay), with each commit's changed paths. Reviews walk history
    in every check (fork points, merge-tree, a chart's `Chart.yaml` log); with the graph git reads
    generation numbers and Bloom filters instead of inflating commits. Only a speed-up: a failure
    is logged, and the next fetch tries again."""
    try:
        run_git(
            path,
            git_env("", None),
            "commit-graph",
            "write",
            "--reachable",
            "--split",
            "--changed-paths",
        )
    except MirrorError as exc:
        remove_leftovers(path)
        log.warning("mirror %s: commit-graph not written: %s", path.name, exc)


def _clean_after_failure(path: Path, exc: Exception) -> None:
    remove_leftovers(path)
    if isinstance(exc, MirrorDiskFull):
        # The loose objects of an interrupted unpack are complete but unreachable: what keeps the
        # disk full. Nothing else writes here (the lock is ours) and reviews read reachable ones.
        try:
            run_git(path, git_env("", None), "prune", "--expire=now")
        except MirrorError as failed:
            log.warning("mirror %s not pruned after a full disk: %s", path, failed)


def os_error(path: Path, exc: OSError) -> MirrorError:
    """A failure of this process's own writes in a mirror, as a MirrorError."""
    if exc.errno == errno.ENOSPC:
        return disk_full(path, "mirror")
    return MirrorError(f"mirror {path.name}: {exc.strerror or exc}")


def disk_full(path: Path, what: str) -> MirrorDiskFull:
    # The path goes to the log only: the message may reach a PR (a linked repository's reason).
    log.warning("no space left on the device holding %s", path)
    return MirrorDiskFull(
        f"{what} failed: no space left on the mirrors' disk (DATA_DIR/mirrors); free some space "
        "there or lower MIRRORS_MAX_MB"
    )


def remove_leftovers(path: Path) -> None:
    for pattern in LEFTOVERS:
        for leftover in path.glob(pattern):
            log.info("removing %s, left by a failed fetch", leftover)
            if leftover.is_dir() and not leftover.is_symlink():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)


def disk_bytes(path: Path) -> int:
    """The sizes of every file under `path`."""
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except FileNotFoundError:
                continue
    return total


def object_bytes(path: Path) -> int:
    """What git's objects take on disk: packs and loose objects (`git count-objects -v`, KiB)."""
    proc = subprocess.run(
        ["git", "-C", str(path), "count-objects", "-v"],
        capture_output=True,
        text=True,
        env=git_env("", None),
    )
    if proc.returncode != 0:
        raise MirrorError(f"git count-objects failed in {path.name}")
    fields = dict(line.split(": ", 1) for line in git_lines(proc.stdout) if ": " in line)
    return sum(int(fields.get(key, "0")) for key in ("size", "size-pack")) * 1024


def healthy(path: Path) -> bool:
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
    run_git(path.parent, git_env("", None), "init", "--quiet", "--bare", str(path))


def git_env(clone_url: str, token: str | None) -> dict[str, str]:
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


def run_git(cwd: Path, env: dict[str, str], *args: str) -> None:
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
        if NO_SPACE in proc.stderr:
            raise disk_full(cwd, f"git {args[0]}")
        lines = proc.stderr.strip().splitlines()
        raise MirrorError(f"git {args[0]} failed: {lines[-1] if lines else proc.returncode}")
