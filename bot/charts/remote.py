"""A chart's dependencies from chart repositories and OCI registries: which ones the review must
fetch, at which version, and where each goes in the render archive.

As `helm dependency build` (which chart-testing runs first) does it: a `Chart.lock` names the exact
versions, and one that no longer matches `Chart.yaml` stops the build with Helm's own message;
without a lock, `Chart.yaml`'s version or range is resolved against the repository. What is already
committed under `charts/` is used as it is, as `helm template` would, unless the lock names another
version of a packaged archive: `helm dependency build` would replace that one, and so does the
review. `file://` dependencies are bot/charts/dependencies.py's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bot.charts.dependencies import FILE_SCHEME, LocalChart, vendored
from bot.charts.lockfile import read_lock
from bot.git.objects import Tree
from bot.model.chart_files import chart_file, read_chart_meta
from bot.model.context import RenderError
from bot.render.deps.request import DependencyRequest

# Dependencies one chart (with its `file://` ones) may have fetched from chart repositories and
# registries: each is a process and a download of up to 64 MB, on both sides of the review. Real
# umbrella charts fetch a handful, the largest some twenty; what is committed under charts/ does
# not count.
MAX_FETCHED_DEPENDENCIES = 32


@dataclass(frozen=True)
class RemoteDependency:
    request: DependencyRequest
    into: str  # the archive directory it goes into: `charts/`, `charts/lib/charts/`
    chart_yaml: str  # the file that declares it, and the line: where a finding points
    line: int | None


@dataclass(frozen=True)
class RemotePlan:
    wanted: tuple[RemoteDependency, ...] = ()
    stale: frozenset[str] = frozenset()  # repository paths of vendored archives the lock replaces
    error: RenderError | None = None  # the build stops here, as Helm's would


def remote_plan(tree: Tree, charts: Sequence[LocalChart]) -> RemotePlan:
    """What the chart and each of its `file://` dependencies need fetched."""
    wanted: list[RemoteDependency] = []
    stale: set[str] = set()
    for chart in charts:
        plan = _chart_plan(tree, chart)
        if plan.error is not None:
            return plan
        wanted += plan.wanted
        stale |= plan.stale
    if len(wanted) > MAX_FETCHED_DEPENDENCIES:
        return RemotePlan(error=_too_many(wanted))
    return RemotePlan(tuple(wanted), frozenset(stale))


def _too_many(wanted: Sequence[RemoteDependency]) -> RenderError:
    """Said at the first dependency past the cap; nothing is fetched."""
    over = wanted[MAX_FETCHED_DEPENDENCIES]
    files = list(dict.fromkeys(dep.chart_yaml for dep in wanted))
    who = files[0] if len(files) == 1 else f"{files[0]} and its file:// dependencies"
    message = (
        f"{who} declares {len(wanted)} dependencies to fetch from chart repositories and "
        f"registries; a chart may have at most {MAX_FETCHED_DEPENDENCIES} fetched, so none was "
        "(commit the others under charts/)"
    )
    return RenderError(over.chart_yaml, over.line, message, unavailable=True)


def _chart_plan(tree: Tree, chart: LocalChart) -> RemotePlan:
    meta = read_chart_meta(tree, chart.directory)
    remote = (
        [d for d in meta.requirements if not d.repository.startswith(FILE_SCHEME)] if meta else []
    )
    if not remote:
        return RemotePlan()
    lock = read_lock(tree, chart.directory)
    if lock is not None and (lock.error or not lock.in_sync):
        return RemotePlan(error=RenderError(lock.path, None, lock.error or lock.out_of_sync))
    unpacked, packed = vendored(tree, chart.directory)
    chart_yaml = (meta.requirements_file if meta else None) or chart_file(chart.directory)
    text = tree.text(chart_yaml) or ""
    wanted, stale = [], set()
    for dep in remote:
        locked = lock.version_of(dep.name, dep.repository) if lock else None
        archive = packed.get(dep.name)
        if dep.name in unpacked or (archive and locked in (None, archive[1])):
            continue  # committed: used as it is
        if archive:
            stale.add(archive[0])
        version = locked or (dep.version or "").strip() or "*"
        request = DependencyRequest(dep.repository, dep.name, version)
        wanted.append(
            RemoteDependency(request, f"{chart.prefix}charts/", chart_yaml, _line(text, dep.name))
        )
    return RemotePlan(tuple(wanted), frozenset(stale))


def _line(text: str, name: str) -> int | None:
    match = re.search(rf"^\s*-?\s*name:\s*[\"']?{re.escape(name)}[\"']?\s*$", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def base_repositories(tree: Tree, chart_dirs: Sequence[str]) -> tuple[str, ...]:
    """Every chart repository and registry the charts at `tree` name: the default allow-list."""
    found: dict[str, None] = {}
    for directory in chart_dirs:
        meta = read_chart_meta(tree, directory)
        for dep in meta.requirements if meta else ():
            if dep.repository and not dep.repository.startswith(FILE_SCHEME):
                found[dep.repository] = None
    return tuple(found)
