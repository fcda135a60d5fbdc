"""What the checks will ask git about the other open PRs, read while the charts render: the render
pool waits on Helm, and this process is free to wait on git meanwhile.

The version check's claims and the duplicates check's candidates walk the same commits: each open
PR's fork point from the target (one `rev-list` for them all), and each chart's directory at every
head and fork point with its `Chart.yaml` (parsed) and `.helmignore`, and the directories in it
each PR changed. All of it is remembered by commit and object ids (bot/git/fork_points.py, the repository's
trees and blobs), so reading it early changes no answer, only when the wait happens."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.git.objects import GitReader
from bot.git.subtree import read_differences
from bot.model.chart_files import CHART_FILE, HELMIGNORE, read_chart_meta
from bot.model.context import OpenPR

log = logging.getLogger(__name__)


def read_ahead(repo: GitReader, target: str, prs: Sequence[OpenPR], charts: Sequence[str]) -> None:
    """Fork points of `prs` from `target`, and `charts`' directories at each head and fork point.
    A failure is left for the check that asks again to meet and report."""
    try:
        points = repo.fork_points(target, [pr.head for pr in prs])
        commits = [
            c
            for pr in prs
            if (point := points.get(pr.head)) is not None and not point.contained
            for c in (pr.head, point.merge_base)
            if c
        ]
        forked = [(pr.head, points[pr.head].merge_base) for pr in prs if pr.head in points]
        for chart in charts:
            dirs = repo.subtrees(chart, commits, read=(CHART_FILE, HELMIGNORE))
            for tree in {d.tree_id: d for d in dirs.values()}.values():
                read_chart_meta(tree, chart)  # parsed once per text, remembered
            # What each PR changed in the chart: the directories that differ, all PRs at once.
            read_differences(
                repo, [(dirs[base].tree_id, dirs[head].tree_id) for head, base in forked if base]
            )
    except Exception:  # noqa: BLE001 - only a head start: the checks ask again and say what failed
        log.debug("reading the open PRs ahead failed", exc_info=True)
