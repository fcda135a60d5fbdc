"""Which directories are charts, which of them a change touches, and what their Chart.yaml says."""

from __future__ import annotations

from collections.abc import Sequence

from bot.engine.chart.files import ChartMeta, all_chart_dirs, read_chart_meta
from bot.errors import ChartReviewError
from bot.git.objects import ChangedFile
from bot.git.repo import GitTree


class ChartError(ChartReviewError):
    """A chart the user asked for does not exist."""


def owning_chart(path: str, dirs: Sequence[str]) -> str | None:
    best = None
    for d in dirs:
        if (d == "." or path.startswith(d + "/")) and (
            best is None or len(d) > len(best) or best == "."
        ):
            best = d
    return best


def chart_dirs(
    base: GitTree,
    head: GitTree,
    changes: Sequence[ChangedFile],
    requested: Sequence[str],
    every: bool,
) -> list[str]:
    known = sorted(set(all_chart_dirs(base.paths())) | set(all_chart_dirs(head.paths())))
    if requested:
        wanted = [r.strip("/") or "." for r in requested]
        missing = [r for r in wanted if r not in known]
        if missing:
            raise ChartError(f"--chart {missing[0]}: no Chart.yaml there at base or head")
        return wanted
    if every:
        return known
    touched = set()
    for change in changes:
        for path in (change.path, change.old_path):
            owner = owning_chart(path, known) if path else None
            if owner is not None:
                touched.add(owner)
    return sorted(touched)


def chart_meta(tree: GitTree, chart_dir: str) -> ChartMeta:
    """Chart.yaml's name and versions as text (every field empty when there is none, or it cannot
    be read: the version check reports that)."""
    return read_chart_meta(tree, chart_dir) or ChartMeta(chart_dir)
