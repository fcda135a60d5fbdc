"""Which directories are charts, which of them a change touches, and what their Chart.yaml says."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bot.charts.dependencies import local_charts
from bot.errors import ChartReviewError
from bot.git.objects import ChangedFile, Tree
from bot.git.tree import GitTree
from bot.model.chart_files import (
    CHART_FILE,
    ChartMeta,
    chart_file,
    find_charts,
    read_chart_meta,
)
from bot.model.ct_config import NO_CT, CtConfig


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


def _in_chart_dirs(dirs: Iterable[str], chart_dirs: Sequence[str]) -> list[str]:
    """Of directories holding a Chart.yaml, those chart-testing takes for charts: directly under
    one of its chart dirs (`charts/<name>/Chart.yaml`). Test fixtures, nested examples and vendored
    subcharts are deeper; a Chart.yaml at the root is in no chart dir."""
    found = set()
    for directory in dirs:
        if directory == ".":
            continue
        parent = directory.rsplit("/", 1)[0] if "/" in directory else "."
        if parent in chart_dirs:
            found.add(directory)
    return sorted(found)


def reviewable_dirs(trees: Sequence[Tree], ct: CtConfig = NO_CT, hidden: bool = False) -> list[str]:
    """The chart directories of the trees by the repository's rule: its `ct.yaml`'s when it has
    one, else every directory with a `Chart.yaml` (less vendored subcharts), but those under a
    hidden directory unless `hidden`: traefik keeps Chart.yaml-only fixtures for a workflow's test
    in `.github/fixtures/…/charts/traefik`, which neither chart-testing nor a release ever takes
    for a chart. A `ct.yaml` whose chart dirs hold no chart at all is not the repository's layout
    (ct would test nothing), so it is not taken to mean "review nothing"."""
    everything = sorted({d for t in trees for d in find_charts(t)})
    if not hidden:
        everything = [d for d in everything if not _in_hidden_directory(d)]
    if ct.source is None:
        return everything
    in_dirs = sorted(
        {d for t in trees for d in _in_chart_dirs(t.dirs_with(CHART_FILE), ct.chart_dirs)}
    )
    return [d for d in in_dirs if not ct.excludes(d)] if in_dirs else everything


def _in_hidden_directory(directory: str) -> bool:
    return any(part.startswith(".") for part in directory.split("/") if part != ".")


def chart_dirs(
    base: GitTree,
    head: GitTree,
    changes: Sequence[ChangedFile],
    requested: Sequence[str],
    every: bool,
    ct: CtConfig = NO_CT,
) -> list[str]:
    if requested:
        # Asked for by name, any directory with a Chart.yaml is reviewed, ct's rules or not.
        anywhere = reviewable_dirs((base, head), hidden=True)
        wanted = [r.strip("/") or "." for r in requested]
        missing = [r for r in wanted if r not in anywhere]
        if missing:
            raise ChartError(f"--chart {missing[0]}: no Chart.yaml there at base or head")
        return wanted
    known = reviewable_dirs((base, head), ct)
    if every:
        return known
    touched = set()
    for change in changes:
        for path in (change.path, change.old_path):
            owner = owning_chart(path, known) if path else None
            if owner is not None:
                touched.add(owner)
    return sorted(touched | _dependents((base, head), known, touched))


def _dependents(trees: Sequence[Tree], known: Sequence[str], touched: set[str]) -> set[str]:
    """The charts that render a touched chart as a `file://` dependency (directly or down a
    chain), on either side: a PR that changes only a library changes what they render, and a
    library renders nothing of its own to review."""
    if not touched:
        return set()
    found = set()
    for tree in trees:
        for chart in known:
            if chart in touched or chart in found:
                continue
            if b"file://" not in (tree.read(chart_file(chart)) or b""):
                continue  # no local dependency: nothing to follow (most charts; a scan, no decode)
            try:
                placed = local_charts(tree, chart)
            except ChartReviewError:
                continue  # an escape or a cycle: the chart's render says so, if it is reviewed
            if any(c.prefix and c.directory in touched for c in placed):
                found.add(chart)
    return found


def chart_meta(tree: GitTree, chart_dir: str) -> ChartMeta:
    """Chart.yaml's name and versions as text (every field empty when there is none, or it cannot
    be read: the version check reports that)."""
    return read_chart_meta(tree, chart_dir) or ChartMeta(chart_dir)
