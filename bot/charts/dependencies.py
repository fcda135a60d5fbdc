"""A chart's `file://` dependencies, found in the same tree as the chart.

`helm dependency build` packages a `file://RELPATH` dependency from the directory RELPATH names,
relative to the chart, into `charts/`. The review does the same from git objects: each side reads
its dependencies from its own commit, so a PR that changes a library chart renders the charts that
use it with the new library at head and the old one at base. A dependency's own `file://`
dependencies go under its `charts/` in turn (a chain). Nothing is fetched: a dependency from a
chart repository or a registry is not resolved here.

A path that leaves the repository is refused, as a symbolic link is: it could only be followed on
a disk the review does not read. A path that names no chart (`helm dependency build` fails on it
too), a cycle and a chain deeper than `MAX_DEPTH` are render errors: the chart cannot be built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.charts.archive import UnsafeTreeError
from bot.errors import ChartReviewError
from bot.git.objects import Tree
from bot.model.chart_files import Dependency, chart_file, read_chart_meta
from bot.model.context import RenderError

FILE_SCHEME = "file://"
MAX_DEPTH = 10  # dependencies of dependencies; no real chain comes close
MAX_CHARTS = 64  # in one archive: a diamond repeated at every level would double at each
_SUBCHART_FILE_RE = re.compile(r"^charts/[^/]+/Chart\.yaml$")
_ARCHIVE_RE = re.compile(r"^charts/(.+?)-(v?\d[^/]*)\.tgz$")


class DependencyError(ChartReviewError):
    """A `file://` dependency that cannot be resolved: the chart cannot be built as Helm would."""

    def __init__(self, chart_yaml: str, line: int | None, message: str) -> None:
        super().__init__(f"{chart_yaml}: {message}")
        self.chart_yaml, self.line = chart_yaml, line

    def render_error(self) -> RenderError:
        return RenderError(self.chart_yaml, self.line, str(self))


@dataclass(frozen=True)
class LocalChart:
    """A chart directory that goes into the render archive: the chart itself (`prefix` empty), or
    a `file://` dependency at `charts/NAME/` of the chart that declares it."""

    directory: str  # in the repository
    prefix: str = ""  # inside the archive's chart: "" or "charts/common/", "charts/b/charts/c/"


def local_charts(tree: Tree, chart_dir: str) -> tuple[LocalChart, ...]:
    """The chart, then every `file://` dependency it needs, recursively, in the order found.
    Raises UnsafeTreeError for a path leaving the repository, DependencyError for the rest."""
    found = [LocalChart(chart_dir)]
    _add_dependencies(tree, found[0], (chart_dir,), found)
    return tuple(found)


def _add_dependencies(
    tree: Tree, parent: LocalChart, chain: tuple[str, ...], found: list[LocalChart]
) -> None:
    meta = read_chart_meta(tree, parent.directory)
    if meta is None:
        return  # the chart itself: said elsewhere; a dependency was checked before it was added
    chart_yaml = chart_file(parent.directory)
    text = tree.text(chart_yaml) or ""
    vendored = _vendored_names(tree, parent.directory)
    placed: dict[str, str] = {}
    for dep in meta.requirements:
        if not dep.repository.startswith(FILE_SCHEME) or dep.name in vendored:
            continue  # vendored under charts/: used as it is, as `helm template` would
        line = _line_of(text, dep.repository)
        directory = resolve_path(parent.directory, dep, chart_yaml)
        if dep.name in placed:
            if placed[dep.name] != directory:
                message = f"dependency {dep.name} is declared twice, from {placed[dep.name]} "
                raise DependencyError(chart_yaml, line, f"{message}and from {directory}")
            continue  # the same chart again under another alias: Helm copies it itself
        placed[dep.name] = directory
        _check_dependency(tree, dep, directory, chain, chart_yaml, line, len(found))
        child = LocalChart(directory, f"{parent.prefix}charts/{dep.name}/")
        found.append(child)
        _add_dependencies(tree, child, (*chain, directory), found)


def _check_dependency(
    tree: Tree,
    dep: Dependency,
    directory: str,
    chain: tuple[str, ...],
    chart_yaml: str,
    line: int | None,
    count: int,
) -> None:
    if directory in chain:
        cycle = " → ".join((*chain[chain.index(directory) :], directory))
        raise DependencyError(chart_yaml, line, f"file:// dependencies form a cycle: {cycle}")
    if len(chain) > MAX_DEPTH:
        message = f"file:// dependencies nest deeper than {MAX_DEPTH} levels"
        raise DependencyError(chart_yaml, line, f"dependency {dep.name}: {message}; not followed")
    if count >= MAX_CHARTS:
        message = f"file:// dependencies add up to more than {MAX_CHARTS} charts"
        raise DependencyError(chart_yaml, line, f"dependency {dep.name}: {message}; not followed")
    if tree.text(chart_file(directory)) is None:
        raise DependencyError(
            chart_yaml,
            line,
            f"dependency {dep.name}: {dep.repository} names no chart at this commit "
            f"({chart_file(directory)} does not exist)",
        )


def resolve_path(chart_dir: str, dep: Dependency, chart_yaml: str) -> str:
    """The repository directory a `file://` dependency names, relative to the chart that declares
    it. Raises UnsafeTreeError when the path leaves the repository."""
    path = dep.repository[len(FILE_SCHEME) :]
    parts = [p for p in chart_dir.split("/") if p not in ("", ".")]
    if path.startswith("/"):
        _escape(chart_yaml, dep, "is an absolute path")
    for part in path.split("/"):
        if part == "..":
            if not parts:
                _escape(chart_yaml, dep, "leaves the repository")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or "."


def _escape(chart_yaml: str, dep: Dependency, why: str) -> None:
    raise UnsafeTreeError(chart_yaml, f"dependency {dep.name}: {dep.repository} {why}")


def vendored(tree: Tree, chart_dir: str) -> tuple[set[str], dict[str, tuple[str, str]]]:
    """The dependencies committed under the chart's `charts/`: unpacked ones by directory and
    `Chart.yaml` name; packaged ones by Helm's `NAME-VERSION.tgz`, with path and version."""
    prefix = chart_dir.rstrip("/") + "/" if chart_dir not in ("", ".") else ""
    unpacked: set[str] = set()
    packed: dict[str, tuple[str, str]] = {}
    for path in tree.paths(f"{prefix}charts"):
        relative = path[len(prefix) :]
        if _SUBCHART_FILE_RE.match(relative):
            subchart = relative.split("/")[1]
            meta = read_chart_meta(tree, f"{prefix}charts/{subchart}")
            unpacked.update(n for n in (subchart, meta.name if meta else None) if n)
        elif relative.count("/") == 1 and (match := _ARCHIVE_RE.match(relative)):
            packed[match.group(1)] = (path, match.group(2))
    return unpacked, packed


def _vendored_names(tree: Tree, chart_dir: str) -> frozenset[str]:
    unpacked, packed = vendored(tree, chart_dir)
    return frozenset(unpacked | set(packed))


def _line_of(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def content_id(tree_ids: list[tuple[str, str]]) -> str:
    """The render cache's address for a chart and its dependencies: the chart's own tree id when
    it has none (so renders cached before dependencies were resolved keep their address), else
    every tree id with where it goes."""
    if len(tree_ids) == 1:
        return tree_ids[0][1]
    return ";".join(f"{prefix}={oid}" for prefix, oid in tree_ids)
