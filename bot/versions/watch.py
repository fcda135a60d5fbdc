"""Which open PRs a version claim touches: what the worker re-checks when a claim moves (the
worker only enqueues those re-checks and publishes them; the claims are computed here)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

from bot.charts.selection import chart_meta
from bot.git.objects import GitReader


class OpenHead(Protocol):
    """An open PR as the worker lists it: its number and the head it claims from."""

    @property
    def number(self) -> int: ...
    @property
    def head_sha(self) -> str: ...


PR = TypeVar("PR", bound=OpenHead)


def claimed_versions(git: GitReader, base: str, head: str) -> list[tuple[str, str]]:
    """(chart directory, version) for every Chart.yaml whose version the range base..head changed."""
    merge_base = git.merge_base(base, head) or base
    out = []
    for change in git.changes(merge_base, head):
        if not change.path.endswith("Chart.yaml") or change.status == "D":
            continue
        path = change.path.rpartition("/")[0]
        before = chart_meta(git.tree(merge_base), path).version
        after = chart_meta(git.tree(head), path).version
        if after and after != before:
            out.append((path, after))
    return out


def claimants(
    git: GitReader, versions: Iterable[tuple[str, str]], open_prs: Sequence[PR], exclude: int
) -> list[PR]:
    """The open PRs (other than `exclude`) whose head gives one of the charts one of `versions`."""
    wanted = set(versions)
    if not wanted:
        return []
    found: list[PR] = []
    for pr in open_prs:
        if pr.number == exclude or not git.resolve(pr.head_sha):
            continue
        tree = git.tree(pr.head_sha)
        if any(chart_meta(tree, path).version == v for path, v in wanted):
            found.append(pr)
    return found
