"""Which other open PRs a review compares the PR with (the version race, duplicates, headings that
exist only on another PR): those that merge into the same branch, each change once.

A PR to another branch (a backport to `release-1.x`) is never a rival nor a duplicate, however
alike its change; a PR whose base is not known (a branch found on the command line) counts. Two
PRs with the same head are one change: the first by number is kept, and one with the head under
review is this change itself."""

from __future__ import annotations

from collections.abc import Sequence

from bot.git.objects import GitView
from bot.model.context import OpenPR

BRANCH_PREFIXES = ("refs/heads/", "refs/remotes/origin/", "origin/")


def branch_name(ref: str) -> str:
    """`main` for `main`, `origin/main` and `refs/heads/main`."""
    for prefix in BRANCH_PREFIXES:
        ref = ref.removeprefix(prefix)
    return ref


def comparable_prs(
    git: GitView, target: str, target_name: str, head: str, prs: Sequence[OpenPR]
) -> tuple[OpenPR, ...]:
    """Those of `prs` that merge into the branch at commit `target` (named `target_name`), one per
    head, none with `head` (the PR under review's)."""
    name = branch_name(target_name)
    unknown = sorted({p.base_ref for p in prs if p.base_ref and branch_name(p.base_ref) != name})
    resolved = {ref: git.resolve(ref) for ref in unknown} if unknown else {}
    kept: dict[str, OpenPR] = {}
    for pr in sorted(prs, key=lambda p: (p.number or 1 << 62, p.ref)):
        base = pr.base_ref
        if base and branch_name(base) != name and resolved.get(base) not in (None, target):
            continue  # a PR to another branch
        if pr.head != head and pr.head not in kept:
            kept[pr.head] = pr
    order = {id(p): i for i, p in enumerate(prs)}
    return tuple(sorted(kept.values(), key=lambda p: order[id(p)]))
