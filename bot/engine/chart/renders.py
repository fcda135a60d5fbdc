"""Charts in a repository at two commits: which ones a review covers, and their renders per profile."""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from bot.engine.chart.archive import Layer, UnsafeTreeError, chart_archive, check_entry
from bot.engine.chart.crds import SideCapabilities, chart_capabilities, new_api_versions
from bot.engine.chart.dependencies import DependencyError, LocalChart, content_id, local_charts
from bot.engine.chart.files import (
    HELMIGNORE,
    chart_file,
    dir_prefix,
    ignored,
    is_vendored_archive,
    parse_rules,
)
from bot.engine.chart.schemas import SCHEMA_FILE, archive_escape, schema_escape
from bot.engine.chart.selection import chart_meta
from bot.engine.config import Config
from bot.engine.context import ChartRenders, Rendered, RenderError
from bot.engine.manifests import (
    ManifestError,
    parse_rendered,
    pod_templates,
    template_repo_path,
)
from bot.engine.profiles import (
    NO_OVERRIDE,
    Profile,
    ValuesOverride,
    check_values_size,
    discover_profiles,
    load_values,
    merge_values,
)
from bot.engine.report import RenderErrorEntry
from bot.git.repo import GitRepo, GitTree
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.lru import BoundedCache
from bot.render.base import RENDER_WORKERS, Renderer, RenderFailure, is_dependency_missing
from bot.render.cache import CachedRender, CacheKey, RenderCache

SIDES = ("base", "head")
# Vendored subchart archives by blob id → why one must be refused (None: safe), read once.
_VENDORED: BoundedCache[str, str | None] = BoundedCache(4096)
_POOL = ThreadPoolExecutor(max_workers=RENDER_WORKERS, thread_name_prefix="render")
# Charts of one review started ahead of the one awaited: twice the workers keeps them all busy when
# charts have one profile or two, and bounds the archives and values held in flight.
CHARTS_AHEAD = 2 * RENDER_WORKERS


@dataclass(frozen=True)
class ChartSource:
    path: str
    base: GitTree
    head: GitTree

    def tree(self, side: str) -> GitTree:
        return self.base if side == "base" else self.head

    def exists(self, side: str) -> bool:
        return self.tree(side).read(chart_file(self.path)) is not None


@dataclass(frozen=True)
class _Job:
    side: str
    profile: Profile
    tree: GitTree
    archiver: _Archiver
    caps: SideCapabilities


class PendingChart:
    """A chart whose profiles are in the render pool: `result()` waits for them. Started charts
    render side by side, so a review of many charts keeps every worker busy."""

    def __init__(
        self,
        source: ChartSource,
        sides: dict[str, dict[str, Rendered]],
        pending: dict[str, dict[str, Future[Rendered]]],
        profiles: dict[str, Profile],
        refused: dict[str, str],
        unvalidated: dict[str, dict[str, str]],
    ) -> None:
        self.source, self._sides, self._pending = source, sides, pending
        self._profiles, self._refused, self._unvalidated = profiles, refused, unvalidated

    def result(self) -> ChartRenders:
        for side, futures in self._pending.items():
            self._sides[side].update({name: future.result() for name, future in futures.items()})
        self._pending = {}  # the futures' archives and values are not held past their renders
        source = self.source
        meta = (
            chart_meta(source.head, source.path)
            if source.exists("head")
            else chart_meta(source.base, source.path)
        )
        return ChartRenders(
            path=source.path,
            name=meta.name or source.path.rsplit("/", 1)[-1],
            base=self._sides["base"],
            head=self._sides["head"],
            profiles={n: _spec(p) for n, p in self._profiles.items()},
            refused=self._refused,
            unvalidated=self._unvalidated,
        )


def render_chart(
    source: ChartSource,
    config: Config,
    only: Sequence[str],
    renderer: Renderer,
    cache: RenderCache,
    repo: GitRepo,
    release: str,
    namespace: str,
    capabilities: Capabilities = DEFAULT_CAPABILITIES,
    override: ValuesOverride = NO_OVERRIDE,
) -> ChartRenders:
    """`capabilities` are the review's own (config, command line); each side adds its chart's CRDs.
    `override` (the command line's --values / --set) applies to every profile."""
    return start_chart(
        source, config, only, renderer, cache, repo, release, namespace, capabilities, override
    ).result()


def start_chart(
    source: ChartSource,
    config: Config,
    only: Sequence[str],
    renderer: Renderer,
    cache: RenderCache,
    repo: GitRepo,
    release: str,
    namespace: str,
    capabilities: Capabilities = DEFAULT_CAPABILITIES,
    override: ValuesOverride = NO_OVERRIDE,
) -> PendingChart:
    """Reads what the chart's renders need (here, in the caller's thread) and hands its profiles to
    the render pool, without waiting for them."""
    sides: dict[str, dict[str, Rendered]] = {"base": {}, "head": {}}
    refused: dict[str, str] = {}
    unvalidated: dict[str, dict[str, str]] = {}
    all_profiles: dict[str, Profile] = {}
    jobs: list[list[_Job]] = []
    for side in SIDES:
        if not source.exists(side):
            continue
        tree = source.tree(side)
        profiles = discover_profiles(
            source.path, tree.paths(source.path), config.profiles_for(source.path), override
        )
        profiles = {n: p for n, p in profiles.items() if not only or n in only}
        all_profiles.update(profiles)
        try:
            charts, reason = checked_charts(tree, source.path)
        except DependencyError as exc:
            sides[side] = {n: Rendered(n, error=exc.render_error()) for n in profiles}
            continue
        if reason is not None:
            refused[side] = reason
            err = RenderError(None, None, f"chart tree refused: {reason}")
            sides[side] = {n: Rendered(n, error=err) for n in profiles}
            continue
        unvalidated[side] = {
            p: why for c in charts for p, why in unsafe_schemas(tree, c.directory).items()
        }
        archiver = _Archiver(repo, tree, charts, frozenset(unvalidated[side]))
        caps = chart_capabilities(repo, tree, source.path, capabilities, charts)
        jobs.append([_Job(side, p, tree, archiver, caps) for p in profiles.values()])
    pending: dict[str, dict[str, Future[Rendered]]] = {}
    # Sides alternate, so one worker builds the head's archive while another builds the base's.
    for job in (j for batch in itertools.zip_longest(*jobs) for j in batch if j is not None):
        pending.setdefault(job.side, {})[job.profile.name] = _POOL.submit(
            render_profile,
            job.tree,
            source.path,
            job.profile,
            job.archiver,
            renderer,
            cache,
            release,
            namespace,
            job.caps,
        )
    return PendingChart(source, sides, pending, all_profiles, refused, unvalidated)


def render_in_order(
    starts: Iterable[Callable[[], PendingChart]], ahead: int = CHARTS_AHEAD
) -> Iterator[ChartRenders]:
    """Each chart's renders, in the order of `starts`, with up to `ahead` charts started and
    rendering meanwhile: enough to keep the pool busy across charts with few profiles, few enough
    that a review of a hundred charts does not hold every chart's archive at once."""
    window: deque[PendingChart] = deque()
    for start in starts:
        window.append(start())
        if len(window) >= ahead:
            yield window.popleft().result()
    while window:
        yield window.popleft().result()


def _spec(profile: Profile) -> Any:
    from bot.engine.config import ProfileSpec

    return ProfileSpec(
        name=profile.name,
        values_file=profile.values_path,
        values=dict(profile.inline) if profile.inline is not None else None,
        arbitrary_uid=profile.arbitrary_uid,
    )


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
    for path in tree.paths(chart_dir):
        entry = tree.entry(path)
        if entry is None:
            continue
        try:
            check_entry(path, entry)
        except UnsafeTreeError as exc:
            return str(exc)
        if entry.kind == "blob" and is_vendored_archive(path, chart_dir):
            why = _VENDORED.get_or_make(entry.oid, partial(_archive_escape, tree, path))
            if why is not None:
                return f"{path}: {why}; refused, not handed to Helm"
    return None


def _archive_escape(tree: GitTree, path: str) -> str | None:
    return archive_escape(tree.read(path) or b"")


def unsafe_schemas(tree: GitTree, chart_dir: str) -> dict[str, str]:
    """The chart's (and unpacked subcharts') schema files that reach outside the chart, by
    repository path, with why: they are left out of the archive (bot/engine/chart/schemas.py)."""
    found = {}
    for path in tree.paths(chart_dir):
        if path.rsplit("/", 1)[-1] == SCHEMA_FILE:
            why = schema_escape(tree.text(path) or "")
            if why is not None:
                found[path] = why
    return found


class _Archiver:
    """Builds the chart's archive, with its `file://` dependencies under `charts/`, only when a
    render actually needs it (a cache miss), once."""

    def __init__(
        self,
        repo: GitRepo,
        tree: GitTree,
        charts: Sequence[LocalChart],
        left_out: frozenset[str] = frozenset(),
    ) -> None:
        self.repo, self.tree, self.charts = repo, tree, tuple(charts)
        self.left_out = left_out  # repository paths
        self._archive: bytes | None = None
        self._lock = threading.Lock()

    def content_id(self) -> str:
        """What the render cache keys the archive by: every chart directory's tree id."""
        return content_id([(c.prefix, self.tree.tree_id(c.directory) or "") for c in self.charts])

    def archive(self) -> bytes:
        with self._lock:
            return self._build()

    def _build(self) -> bytes:
        if self._archive is None:
            root, *dependencies = (self._layer(c) for c in self.charts)
            self._archive = chart_archive(
                self.repo, self.tree.commit, root.directory, root.keep, dependencies
            )
        return self._archive

    def _layer(self, chart: LocalChart) -> Layer:
        # Helm's own directory loader skips what .helmignore names, and `helm dependency build`
        # packages each dependency so, by its own: an archive must be built so.
        prefix = dir_prefix(chart.directory)
        rules = parse_rules((self.tree.text(f"{prefix}{HELMIGNORE}") or "").splitlines())
        left_out = frozenset(p[len(prefix) :] for p in self.left_out if p.startswith(prefix))
        return Layer(
            chart.directory,
            chart.prefix,
            lambda rel: rel not in left_out and not ignored(rel, rules),
        )


def profile_values(tree: GitTree, profile: Profile) -> tuple[dict[str, Any], str]:
    """The values a profile supplies, and their content id for the render cache."""
    values: dict[str, Any] = {}
    ids = []
    if profile.values_path is not None:
        entry = tree.entry(profile.values_path)
        data = tree.read(profile.values_path)
        if entry is None or data is None:
            raise RenderFailure(
                f"values file {profile.values_path} does not exist", profile.values_path
            )
        # Checked before parsing: the parse runs in the reviewing process, outside the sandbox.
        check_values_size(len(data), profile.values_path)
        values = load_values(data.decode("utf-8", errors="replace"), profile.values_path)
        ids.append(entry.oid)
    if profile.inline is not None:
        values = merge_values(values, profile.inline)
        ids.append(hashlib.sha256(json.dumps(profile.inline, sort_keys=True).encode()).hexdigest())
    if profile.override:
        values = profile.override.apply(values)
        ids.append(profile.override.content_id)
    return values, "+".join(ids) or "defaults"


def render_profile(
    tree: GitTree,
    chart_dir: str,
    profile: Profile,
    archiver: _Archiver,
    renderer: Renderer,
    cache: RenderCache,
    release: str,
    namespace: str,
    caps: SideCapabilities | None = None,
) -> Rendered:
    caps = caps or SideCapabilities(DEFAULT_CAPABILITIES, asks=False)
    try:
        values, values_id = profile_values(tree, profile)
    except RenderFailure as exc:
        return Rendered(profile.name, error=RenderError(exc.template, exc.line, exc.message))
    render = partial(
        _render_cached,
        archiver.content_id(),
        values_id,
        values,
        archiver,
        renderer,
        cache,
        release,
        namespace,
    )
    placed = {c.prefix: c.directory for c in archiver.charts if c.prefix}
    done = partial(_rendered, profile.name, values, chart_dir, namespace, placed)
    rendered = done(render(caps.capabilities))
    more = new_api_versions(rendered.documents, caps)
    if more:
        # The templates define CRDs and ask `.Capabilities.APIVersions`: rendered again as they
        # would be once those CRDs are installed (an upgrade, or a cluster that has them).
        rendered = done(render(caps.capabilities.adding(more)))
    return rendered


def _render_cached(
    tree_id: str,
    values_id: str,
    values: Mapping[str, Any],
    archiver: _Archiver,
    renderer: Renderer,
    cache: RenderCache,
    release: str,
    namespace: str,
    capabilities: Capabilities,
) -> CachedRender:
    key = CacheKey(tree_id, values_id, renderer.version, release, namespace, capabilities.cache_id)
    hit = cache.get(key)
    if hit is None:
        make = partial(_render_new, key, values, archiver, renderer, cache, capabilities)
        hit = _IN_FLIGHT.once((id(cache), key), make)
    return hit


def _render_new(
    key: CacheKey,
    values: Mapping[str, Any],
    archiver: _Archiver,
    renderer: Renderer,
    cache: RenderCache,
    capabilities: Capabilities,
) -> CachedRender:
    hit = cache.get(key)  # rendered meanwhile, by the render this one would have waited for
    if hit is not None:
        return hit
    # A renderer is told capabilities only when they differ from its defaults.
    extra = (capabilities,) if capabilities.cache_id else ()
    try:
        manifests = renderer.render(archiver.archive(), values, key.release, key.namespace, *extra)
        hit = CachedRender(manifests, None)
    except RenderFailure as failure:
        hit = CachedRender(None, failure)
    if hit.error is None or not hit.error.transient:
        cache.put(key, hit)
    return hit


class _SingleFlight:
    """One render per cache key at a time: reviews side by side (a replay's changes, where one's
    base is often the next one's head; two PRs on the same develop) ask for the same render at
    once, and the second waits for the first's rather than rendering it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[int, CacheKey], Future[CachedRender]] = {}

    def once(self, key: tuple[int, CacheKey], make: Callable[[], CachedRender]) -> CachedRender:
        with self._lock:
            running = self._running.get(key)
            if running is None:
                mine: Future[CachedRender] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result()  # a render under way in another worker: never a deadlock
        try:
            result = make()
            mine.set_result(result)
            return result
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        finally:
            with self._lock:
                del self._running[key]


_IN_FLIGHT = _SingleFlight()


def _rendered(
    profile: str,
    values: Mapping[str, Any],
    chart_dir: str,
    namespace: str,
    placed: Mapping[str, str],
    hit: CachedRender,
) -> Rendered:
    if hit.error is not None or hit.manifests is None:
        err = hit.error or RenderFailure("no output")
        template = (
            template_repo_path(err.template, chart_dir, placed)
            if err.template and "/" in err.template
            else err.template
        )
        missing = is_dependency_missing(err.message)
        error = RenderError(template, err.line, err.message, unavailable=missing)
        return Rendered(profile, error=error, values=values)
    try:
        docs = parse_rendered(hit.manifests, chart_dir, namespace, placed)
    except ManifestError as exc:
        return Rendered(profile, error=RenderError(exc.template, exc.line, str(exc)), values=values)
    # Here, while the other workers render: most checks read a render's pod templates.
    pod_templates(docs)
    return Rendered(profile, documents=docs, values=values)


def render_error_entries(renders: ChartRenders) -> tuple[RenderErrorEntry, ...]:
    """Every failed render of the chart, for the JSON report's `render_errors`."""
    out = []
    for side in SIDES:
        for profile, rendered in sorted(renders.side(side).items()):
            if rendered.error is not None:
                e = rendered.error
                out.append(RenderErrorEntry(side, profile, e.template, e.line, e.message))
    return tuple(out)
