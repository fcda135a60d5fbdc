"""Where each open PR's head forked from the integration branch: whether develop already contains it
and, if not, its merge base with develop. Asked for every open PR at once, so the cost is one `git
rev-list` whatever their number, where one `merge-base` and one `merge-base --is-ancestor` per PR
cost two processes each (a minute at a few hundred PRs).

Why the rev-list is enough: the commits reachable from a head and not from develop are S; the
merge bases of (develop, head) are the newest of the commits just outside S, the parents of S's
commits that develop reaches (every common ancestor lies behind one of them). When there is one
such parent, it is the merge base; when there are several (a PR that merged develop in), git's own
`merge-base` decides, exactly as before. A head that is not in S at all is contained in develop.

A merge base is a fact of two commit ids, which never changes: it is remembered per repository for
the life of the process (in the App, across every review of that repository)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.lru import BoundedCache

# (repository, develop, head) pairs remembered: a few reviews' worth at a thousand open PRs each.
_CACHED = 20_000
# How much of develop's first-parent line is read to order several merge-base candidates: first as
# much as open-PR discovery reads (remembered), then, for candidates older than that, on down to
# them (a stream that stops at the oldest; bitnami/charts' 34,000 first-parent commits cost 0.25 s,
# where a `git merge-base` costs 0.3 s for each PR open since 2016). Past that, `git merge-base`.
FIRST_PARENTS = 5000
DEEP_FIRST_PARENTS = 200_000


@dataclass(frozen=True)
class ForkPoint:
    contained: bool  # develop contains the head: it has merged, nothing of it is open
    merge_base: str | None  # None when contained, or when the histories are unrelated


class History(Protocol):
    """What is asked of the repository (`GitRepo`), which also offers `fork_points` itself."""

    @property
    def path(self) -> Path: ...

    def commits_outside(
        self, heads: list[str], outside: str
    ) -> dict[str, tuple[str, ...]] | None: ...

    def merge_base(self, a: str, b: str) -> str | None: ...

    def first_parent_positions(
        self, rev: str, wanted: Collection[str], max_count: int
    ) -> dict[str, int]: ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...


_CACHE: BoundedCache[tuple[str, str, str], ForkPoint] = BoundedCache(_CACHED)


def fork_points(repo: History, develop: str, heads: Sequence[str]) -> dict[str, ForkPoint]:
    """Each head's fork point from `develop` (commit ids), the ones not remembered in one git
    process; one more reads develop's first-parent line, as deep as the oldest candidate, when some
    head has several merge-base candidates, and a `merge-base` decides for a head whose candidates
    are not all on it."""
    where = str(repo.path)
    found = {h: _CACHE.get((where, develop, h)) for h in dict.fromkeys(heads)}
    missing = [h for h, point in found.items() if point is None]
    if missing:  # (none: no git at all)
        graph = repo.commits_outside(missing, develop)
        edges = {h: boundary(graph, h) for h in missing if h in graph} if graph is not None else {}
        several = {c for e in edges.values() if len(e) > 1 for c in e}
        line = _Line(repo, develop, several)
        for head in missing:
            point = _from_graph(repo, line, edges, head) if graph is not None else None
            point = point or _asked(repo, develop, head)
            _CACHE.put((where, develop, head), point)
            found[head] = point
    return {h: p for h, p in found.items() if p is not None}


class _Line:
    """Positions on develop's first-parent line (0 the tip), read only when needed."""

    def __init__(self, repo: History, develop: str, candidates: set[str]) -> None:
        self.position = (
            repo.first_parent_positions(develop, candidates, FIRST_PARENTS) if candidates else {}
        )
        older = candidates - self.position.keys()
        if older:  # positions count from develop's tip in both reads
            self.position.update(repo.first_parent_positions(develop, older, DEEP_FIRST_PARENTS))
        self.develop = develop

    def newest(self, candidates: tuple[str, ...]) -> str | None:
        """The newest candidate when every one is on the line, else None (not decided here)."""
        if any(c not in self.position for c in candidates):
            return None
        return min(candidates, key=self.position.__getitem__)


def _from_graph(
    repo: History, line: _Line, edges: Mapping[str, tuple[str, ...]], head: str
) -> ForkPoint:
    if head not in edges:
        return ForkPoint(contained=True, merge_base=None)
    edge = edges[head]
    if len(edge) <= 1:  # none: an unrelated history, no common ancestor
        return ForkPoint(contained=False, merge_base=edge[0] if edge else None)
    base = line.newest(edge) or repo.merge_base(line.develop, head)
    return ForkPoint(contained=False, merge_base=base)


def boundary(graph: Mapping[str, tuple[str, ...]], head: str) -> tuple[str, ...]:
    """The parents outside `graph` of the commits `head` reaches inside it, in the order met."""
    seen, stack = {head}, [head]
    edge: dict[str, None] = {}  # ordered, each once
    while stack:
        for parent in graph[stack.pop()]:
            if parent in graph:
                if parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
            else:
                edge[parent] = None
    return tuple(edge)


def _asked(repo: History, develop: str, head: str) -> ForkPoint:
    """The pair's own git queries: where the batch could not run (a head git does not know)."""
    if repo.is_ancestor(head, develop):
        return ForkPoint(contained=True, merge_base=None)
    return ForkPoint(contained=False, merge_base=repo.merge_base(develop, head))
