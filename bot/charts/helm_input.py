"""What a render process is handed of a chart: the files Helm reads of it and its local subcharts,
each refused where it is unsafe (an archive past the caps, a schema that reaches outside), and the
in-memory archive built from them, named by content so that a chart already rendered is known by
its id alone."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import partial

from bot.charts.archive import Layer, UnsafeTreeError, chart_archive, check_entry
from bot.charts.dependencies import LocalChart, content_id, local_charts
from bot.charts.fetching import NOTHING, FetchedDependencies
from bot.charts.schemas import (
    NOT_HANDED_ON,
    SCHEMA_FILE,
    ArchiveVerdict,
    archive_verdict,
    schema_escape,
)
from bot.git.objects import GitReader
from bot.git.tree import GitTree
from bot.lru import BoundedCache
from bot.model.chart_files import (
    HELMIGNORE,
    dir_prefix,
    ignored,
    is_vendored_archive,
    parse_rules,
)
from bot.tarball.reader import ONE_CHART, Budget, OverCap
from bot.textlines import git_lines

# Vendored subchart archives by blob id → why one must be refused (None: safe) and what reading it
# cost, read once.
_VENDORED: BoundedCache[str, ArchiveVerdict] = BoundedCache(4096)


def checked_charts(tree: GitTree, chart_dir: str) -> tuple[tuple[LocalChart, ...], str | None]:
    """The chart and its `file://` dependencies, or why one of their trees is refused. Raises
    DependencyError for a dependency that cannot be resolved."""
    reason = unsafe_reason(tree, chart_dir)
    if reason is not None:
        return (), reason
    try:
        charts = local_charts(tree, chart_dir)
    except UnsafeTreeError as exc:
        return (), str(exc)
    for directory in dict.fromkeys(c.directory for c in charts[1:]):
        reason = unsafe_reason(tree, directory)
        if reason is not None:
            return (), reason
    return charts, None


def unsafe_reason(tree: GitTree, chart_dir: str) -> str | None:
    """Why the directory's tree is refused (a symbolic link, a submodule, a vendored archive that
    escapes), or None. Remembered by the directory's tree id: the base of every PR against develop,
    and a replay's next change of the chart, ask again of the same tree."""
    tree_id = tree.tree_id(chart_dir)
    if tree_id is None:
        return _unsafe_reason(tree, chart_dir)
    make = partial(_unsafe_reason, tree, chart_dir)
    return _REFUSED.get_or_make((tree_id, chart_dir), lambda: (make(),))[0]


def _unsafe_reason(tree: GitTree, chart_dir: str) -> str | None:
    together = Budget(scope=ONE_CHART)  # what the chart's archives cost the pre-check, in all
    for path in helm_reads(tree, chart_dir):
        entry = tree.entry(path)
        if entry is None:
            continue
        try:
            check_entry(path, entry)
        except UnsafeTreeError as exc:
            return str(exc)
        if entry.kind == "blob" and is_vendored_archive(path, chart_dir):
            verdict = _VENDORED.get_or_make(entry.oid, partial(_archive_verdict, tree, path))
            if verdict.why is not None:
                return f"{path}: {verdict.why}; {NOT_HANDED_ON}"
            try:
                together.charge(verdict.cost)
            except OverCap as exc:
                return f"{chart_dir}: its vendored archives hold {exc}; {NOT_HANDED_ON}"
    return None


def _archive_verdict(tree: GitTree, path: str) -> ArchiveVerdict:
    return archive_verdict(tree.read(path) or b"")


def unsafe_schemas(tree: GitTree, chart_dir: str) -> dict[str, str]:
    """The chart's (and unpacked subcharts') schema files that reach outside the chart, by
    repository path, with why: they are left out of the archive (bot/charts/schemas.py).
    Remembered by the directory's tree id, as unsafe_reason."""
    tree_id = tree.tree_id(chart_dir)
    if tree_id is None:
        return _unsafe_schemas(tree, chart_dir)
    make = partial(_unsafe_schemas, tree, chart_dir)
    return dict(_ESCAPING.get_or_make((tree_id, chart_dir), make))


# What a directory's tree says of itself, by (tree id, where it stands: the messages name paths).
_TREES_KEPT = 512
_REFUSED: BoundedCache[tuple[str, str], tuple[str | None]] = BoundedCache(_TREES_KEPT)
_ESCAPING: BoundedCache[tuple[str, str], dict[str, str]] = BoundedCache(_TREES_KEPT)


def helm_reads(tree: GitTree, chart_dir: str) -> list[str]:
    """The chart's files Helm's loader reads: those its `.helmignore` leaves in. What it names (a
    symbolic link a chart keeps for its developers, say) Helm never opens, so no check refuses the
    chart for it."""
    prefix = dir_prefix(chart_dir)
    rules = parse_rules(git_lines(tree.text(f"{prefix}{HELMIGNORE}") or ""))
    paths = tree.paths(chart_dir)
    if not rules:
        return list(paths)
    return [p for p in paths if not ignored(p[len(prefix) :], rules)]


def schema_files(tree: GitTree, charts: Sequence[LocalChart]) -> list[str]:
    """Every `values.schema.json` Helm would read in the charts (subcharts' included)."""
    return [
        p
        for c in charts
        for p in helm_reads(tree, c.directory)
        if p.rsplit("/", 1)[-1] == SCHEMA_FILE
    ]


def _unsafe_schemas(tree: GitTree, chart_dir: str) -> dict[str, str]:
    found = {}
    for path in helm_reads(tree, chart_dir):
        if path.rsplit("/", 1)[-1] == SCHEMA_FILE:
            why = schema_escape(tree.text(path) or "")
            if why is not None:
                found[path] = why
    return found


class ChartArchiver:
    """Builds the chart's archive, with its `file://` dependencies under `charts/`, only when a
    render actually needs it (a cache miss), once."""

    def __init__(
        self,
        repo: GitReader,
        tree: GitTree,
        charts: Sequence[LocalChart],
        left_out: frozenset[str] = frozenset(),
        fetched: FetchedDependencies = NOTHING,
    ) -> None:
        self.repo, self.tree, self.charts = repo, tree, tuple(charts)
        self.left_out = left_out | fetched.stale  # repository paths
        self.fetched = fetched
        self._archive: bytes | None = None
        self._lock = threading.Lock()

    def content_id(self) -> str:
        """What the render cache keys the archive by: every chart directory's tree id, and every
        fetched archive's sha256 (and which committed archives it replaced)."""
        ids = [(c.prefix, self.tree.tree_id(c.directory) or "") for c in self.charts]
        ids += [(path, oid) for path, oid, _ in self.fetched.members]
        ids += [(f"-{path}", "") for path in sorted(self.fetched.stale)]
        return content_id(ids)

    def archive(self) -> bytes:
        with self._lock:
            return self._build()

    def _build(self) -> bytes:
        if self._archive is None:
            root, *dependencies = (self._layer(c) for c in self.charts)
            self._archive = chart_archive(
                self.repo,
                self.tree.commit,
                root.directory,
                root.keep,
                dependencies,
                self.fetched.members,
            )
        return self._archive

    def _layer(self, chart: LocalChart) -> Layer:
        # Helm's own directory loader skips what .helmignore names, and `helm dependency build`
        # packages each dependency so, by its own: an archive must be built so.
        prefix = dir_prefix(chart.directory)
        rules = parse_rules(git_lines(self.tree.text(f"{prefix}{HELMIGNORE}") or ""))
        left_out = frozenset(p[len(prefix) :] for p in self.left_out if p.startswith(prefix))
        return Layer(
            chart.directory,
            chart.prefix,
            lambda rel: rel not in left_out and not ignored(rel, rules),
        )
