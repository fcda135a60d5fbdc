"""Open PRs of a local repository, for the command line (the App reads them from GitHub instead).

Discovery, in order of trust: `--open-pr NUMBER=REF` as given; else the `refs/pull/*/head` refs a
mirror fetches; else the other branches. A head already contained in develop has merged."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.cli.errors import UsageError
from bot.engine.context import OpenPR
from bot.git.refs import pull_number
from bot.git.repo import GitRepo

OPEN_PR_ARG_RE = re.compile(r"^(\d+)=(.+)$")
# Long-lived branches that are never a PR's head.
MAINLINE_BRANCHES = frozenset({"develop", "main", "master", "HEAD"})


def discover_open_prs(
    repo: GitRepo, develop_sha: str, explicit: list[str] | None, exclude_head: str | None
) -> tuple[OpenPR, ...]:
    """The open PRs' heads. Raises UsageError naming a malformed or unknown `--open-pr`."""
    if explicit:
        found = [parse_open_pr(repo, arg) for arg in explicit]
        return tuple(pr for pr in found if pr.head != exclude_head)
    prs = pull_request_heads(repo) or _branches(repo)
    return tuple(
        pr
        for pr in _unique_heads(prs)
        if pr.head != exclude_head and not repo.is_ancestor(pr.head, develop_sha)
    )


def parse_open_pr(repo: GitRepo, arg: str) -> OpenPR:
    match = OPEN_PR_ARG_RE.match(arg.strip())
    if match is None:
        raise UsageError(f"--open-pr {arg!r}: expected NUMBER=REF, e.g. 12=feature-x")
    ref = match.group(2)
    sha = repo.resolve(ref)
    if sha is None:
        raise UsageError(f"--open-pr {arg!r}: unknown ref {ref!r}")
    return OpenPR(number=int(match.group(1)), head=sha, ref=ref)


def pull_request_heads(repo: GitRepo) -> list[OpenPR]:
    """Every `refs/pull/N/head` a mirror fetched, by number."""
    prs = []
    for name, sha in repo.refs("refs/pull").items():
        number = pull_number(name)
        if number is not None:
            prs.append(OpenPR(number=number, head=sha))
    return sorted(prs, key=lambda pr: pr.number)


def _branches(repo: GitRepo) -> list[OpenPR]:
    """Local branches, then remote-tracking ones not shadowed by a local branch of the same name."""
    local = repo.refs("refs/heads")
    prs = [OpenPR(0, sha, _short(name, 2)) for name, sha in sorted(local.items())]
    names = {pr.ref for pr in prs}
    for name, sha in sorted(repo.refs("refs/remotes").items()):
        branch = _short(name, 3)  # refs/remotes/<remote>/<branch>
        if branch not in names:
            prs.append(OpenPR(0, sha, branch))
            names.add(branch)
    return [pr for pr in prs if pr.ref not in MAINLINE_BRANCHES]


def _short(refname: str, drop: int) -> str:
    return refname.split("/", drop)[-1]


def _unique_heads(prs: Iterable[OpenPR]) -> list[OpenPR]:
    seen: set[str] = set()
    unique = []
    for pr in prs:
        if pr.head not in seen:
            seen.add(pr.head)
            unique.append(pr)
    return unique
