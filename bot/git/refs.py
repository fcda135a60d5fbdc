"""Two facts about a repository's refs, each answered once: which branch is the integration branch
(develop), and which refs are pull requests' heads."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

DEVELOP = "develop"
# A plain clone of a repository whose develop is not checked out still has it as a remote branch.
DEVELOP_CANDIDATES = (DEVELOP, f"origin/{DEVELOP}")
PULL_HEAD_RE = re.compile(r"^refs/pull/(\d+)/head$")


class Refs(Protocol):
    def resolve(self, ref: str) -> str | None: ...

    def default_branch(self) -> str | None: ...


@dataclass(frozen=True)
class Branch:
    name: str
    sha: str


def integration_branch(
    git: Refs,
    configured: str | None = None,
    known: Mapping[str, str | None] | None = None,
    default_branch: str | None = None,
    target_refs: Sequence[str] = (),
) -> Branch | None:
    """The branch every PR's chart version is compared with: the configured one (`develop:` in the
    config), else the repository's chart-testing target branch (`target_refs`, the refs that name
    `target-branch:` of its ct.yaml: the repository's own statement of where PRs go), else
    `develop`, else the default branch; the first that exists. `known` holds refs
    already resolved (the default branch is only looked up when no named one exists). A branch the
    user names on the command line is the caller's to resolve: asking for one that does not exist
    is an error there, not a fallback here. `default_branch` is the default branch when the caller
    knows it better than the repository's HEAD does (the App asks GitHub)."""
    known = known or {}
    for ref in (configured, *target_refs, *DEVELOP_CANDIDATES):
        if not ref:
            continue
        sha = known[ref] if ref in known else git.resolve(ref)
        if sha:
            return Branch(ref, sha)
    default = default_branch or git.default_branch()
    sha = git.resolve(default) if default else None
    return Branch(default, sha) if default and sha else None


def pull_number(ref: str) -> int | None:
    """N for `refs/pull/N/head`, else None."""
    match = PULL_HEAD_RE.match(ref)
    return int(match.group(1)) if match else None
