"""What the other open PRs did to the files this PR changed: each file at the PR's merge base with
the target and at its head, read only where the two differ.

Cheap first: the repository adapter tells files apart by blob id (bot/versions/claims.py's
`BatchGit`), so hundreds of open PRs cost a few git requests, and only the files an open PR really
changed are read. Any other `GitView` is asked PR by PR."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.git.objects import GitView, Tree
from bot.model.chart_files import in_chart
from bot.model.context import OpenPR
from bot.versions.claims import BatchGit, ChartDir


@dataclass(frozen=True)
class Sides:
    """One file at an open PR's merge base and at its head (None where it is absent)."""

    before: str | None
    after: str | None


# head sha -> path -> the file's two sides, for the paths that PR changed
Touched = dict[str, dict[str, Sides]]


def touched(
    git: GitView,
    target: str,
    prs: Sequence[OpenPR],
    paths: Iterable[str],
    charts: Sequence[str] = (),
) -> Touched:
    """For every open PR not yet in `target`, the files among `paths` it changed. `charts`: the
    chart directories the paths are in, whose trees at every PR's head and fork point the review
    read ahead (bot/charts/read_ahead.py)."""
    wanted = tuple(dict.fromkeys(paths))
    if not wanted or not prs:
        return {}
    if isinstance(git, BatchGit):
        return _batched(git, target, prs, wanted, charts)
    found: Touched = {}
    for pr in prs:
        base = git.merge_base(target, pr.head)
        if base is None or base == pr.head:  # unrelated, or already in the target
            continue
        sides = _compare(git.tree(base), git.tree(pr.head), wanted)
        if sides:
            found[pr.head] = sides
    return found


def _batched(
    git: BatchGit, target: str, prs: Sequence[OpenPR], paths: Sequence[str], charts: Sequence[str]
) -> Touched:
    points = git.fork_points(target, [pr.head for pr in prs])
    forked = {
        pr.head: point.merge_base
        for pr in prs
        if not (point := points[pr.head]).contained and point.merge_base
    }
    commits = [c for head, base in forked.items() for c in (head, base) if c]
    differing: list[tuple[str, ChartDir, ChartDir, list[str]]] = []
    for directory, inside in _by_directory(paths, charts).items():
        dirs = git.subtrees(directory, commits)
        for head, base in forked.items():
            if base is None:
                continue
            before, after = dirs[base], dirs[head]
            if before.tree_id == after.tree_id:
                continue  # the PR left the whole directory alone: most of hundreds of open PRs
            changed = [p for p in inside if before.content_id(p) != after.content_id(p)]
            if changed:
                differing.append((head, before, after, changed))
    # Every text read below, in one request to git (one a file was ~150 waits for it a review).
    ids = (t.content_id(p) for _, b, a, changed in differing for t in (b, a) for p in changed)
    git.blobs(list(dict.fromkeys(oid for oid in ids if oid is not None)))
    found: Touched = {}
    for head, before, after, changed in differing:
        found.setdefault(head, {}).update(_compare(before, after, changed))
    return found


def _by_directory(paths: Sequence[str], charts: Sequence[str]) -> dict[str, list[str]]:
    """The paths by the chart directory holding them (read ahead at every PR), else by their top
    directory (a chart's parent, usually `charts`), so that a directory is read once for all of
    its files; files at the root share the root."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        holding = [c for c in charts if c not in ("", ".") and in_chart(path, c)]
        top = path.split("/", 1)[0] if "/" in path else ""
        groups.setdefault(max(holding, key=len) if holding else top, []).append(path)
    return groups


def _compare(before: Tree, after: Tree, paths: Sequence[str]) -> dict[str, Sides]:
    sides = {}
    for path in paths:
        old, new = before.text(path), after.text(path)
        if old != new:
            sides[path] = Sides(old, new)
    return sides


def chart_paths(paths: Iterable[str], charts: Sequence[str]) -> tuple[str, ...]:
    """The paths inside one of `charts`."""
    return tuple(p for p in paths if any(in_chart(p, c) for c in charts))


def stacked(git: GitView, head: str, other: str) -> bool:
    """Whether one of the two heads is built on the other: a PR stacked on another carries its
    changes without duplicating them."""
    return git.is_ancestor(other, head) or git.is_ancestor(head, other)
