"""The action's source: the job's checkout, with the commits a review needs fetched into it.

`actions/checkout` checks out the PR's merge commit and, with `fetch-depth: 0`, every branch under
`refs/remotes/origin/`, but never another PR's head (nor a fork's): those are fetched by id from
`origin`, with the credentials the checkout left in the repository's git config.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from pathlib import Path

from bot.action.env import ActionSetupError
from bot.git.repo import GitError, GitRepo
from bot.git.shallow import is_shallow

log = logging.getLogger(__name__)

FETCH_TIMEOUT = 600.0
CHECKOUT_HINT = "add `- uses: actions/checkout@v4` with `fetch-depth: 0` before chart-review's step"


def open_checkout(path: Path) -> GitRepo:
    try:
        return GitRepo(path)
    except GitError as exc:
        raise ActionSetupError(f"{path} is not a git checkout ({exc}): {CHECKOUT_HINT}") from None


def missing_commits(git: GitRepo, shas: Sequence[str]) -> list[str]:
    return [sha for sha in dict.fromkeys(shas) if git.resolve(sha) is None]


def fetch_commits(git: GitRepo, shas: Sequence[str]) -> list[str]:
    """Fetch the commits of `shas` the checkout lacks; returns those still missing after it. A
    shallow checkout is deepened whole, since a review compares with the merge base."""
    missing = missing_commits(git, shas)
    cut_short = is_shallow(git)
    if not missing and not cut_short:
        return []
    args = ["fetch", "--quiet", "--no-tags"]
    if cut_short:
        args.append("--unshallow")
    proc = _git(git.path, *args, "origin", *missing)
    if proc.returncode != 0:
        log.warning("git fetch origin failed: %s", proc.stderr.strip()[-500:])
    return missing_commits(git, missing)


def require_commits(git: GitRepo, shas: Sequence[str]) -> None:
    """The PR's own base and head, which the review cannot do without."""
    still = fetch_commits(git, shas)
    if still:
        raise ActionSetupError(
            f"commit {still[0][:12]} is not in {git.path} and `git fetch origin` could not get "
            f"it: {CHECKOUT_HINT}"
        )


def _git(path: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(path), *args],
        capture_output=True,
        text=True,
        timeout=FETCH_TIMEOUT,
        check=False,
    )
