"""A side's remote dependencies, fetched: the archives that go under `charts/` in its render
archive, and what the review says when one cannot be had.

A dependency that cannot be fetched (offline, not allowed, unreachable, refused) leaves the chart
unrendered on that side: a render error marked `unavailable`, which the render check says as "not
reviewed", never as a failure of the chart and never as a pass. As `helm dependency build` stops at
its first failure, no fetch starts after one has failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, replace
from functools import partial

from bot.charts.dependencies import LocalChart, vendored
from bot.charts.remote import RemoteDependency, base_repositories, remote_plan
from bot.charts.resources import Pool
from bot.charts.schemas import NOT_HANDED_ON, archive_escape
from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.chart_files import dir_prefix, find_charts, read_chart_meta
from bot.model.config import DependenciesConfig
from bot.model.context import RenderError
from bot.render.deps.fetcher import DependencyFetcher
from bot.render.deps.indexes import Pinned
from bot.render.deps.policy import Access, FetchPolicy
from bot.render.deps.request import DependencyRequest, Fetched, FetchError

Fetch = Callable[[DependencyRequest], Fetched]
# Fetched archives by sha256 → why one is refused (None: safe), read once.
_FETCHED: BoundedCache[str, str | None] = BoundedCache(4096)


@dataclass(frozen=True)
class FetchedDependencies:
    # (path in the chart, content id, bytes): `charts/redis-17.3.0.tgz`, by the archive's sha256.
    members: tuple[tuple[str, str, bytes], ...] = ()
    stale: frozenset[str] = frozenset()  # vendored archives (repository paths) left out
    versions: Mapping[str, str] | None = None  # subchart directory (`charts/redis/`) → version


NOTHING = FetchedDependencies()


def fetch_dependencies(
    tree: Tree, charts: Sequence[LocalChart], fetch: Fetch | None, pool: Pool
) -> FetchedDependencies | RenderError:
    """The side's dependencies from repositories, fetched in `pool`, or the error that stops its
    build. Without a `fetch` (a caller that renders only what is committed) nothing is fetched."""
    plan = remote_plan(tree, charts)
    if plan.error is not None:
        return plan.error
    members = []
    versions = dict(committed_versions(tree, charts))
    results = _fetch_in_order(fetch, plan.wanted, pool) if fetch is not None else []
    for dep, got in zip(plan.wanted, results, strict=False):
        if isinstance(got, FetchError):
            return RenderError(dep.chart_yaml, dep.line, str(got), unavailable=True)
        refused = fetched_refusal(dep.request, got)
        if refused is not None:
            return RenderError(dep.chart_yaml, dep.line, refused, unavailable=True)
        path = f"{dep.into}{dep.request.name}-{got.version}.tgz"
        members.append((path, got.digest, got.data))
        versions[f"{dep.into}{dep.request.name}/"] = got.version
    return FetchedDependencies(tuple(members), plan.stale, versions)


def _fetch_in_order(
    fetch: Fetch, wanted: Sequence[RemoteDependency], pool: Pool
) -> list[Fetched | FetchError]:
    """Each dependency's archive or error, in declared order, as many at a time as `pool` has
    threads; once one has failed no other starts, and the list ends at the first that failed."""
    results: dict[int, Fetched | FetchError] = {}
    running: dict[Future[Fetched | FetchError], int] = {}
    queued = iter(enumerate(wanted))
    failed = False
    while True:
        while not failed and len(running) < pool.workers:
            nxt = next(queued, None)
            if nxt is None:
                break
            running[pool.submit(_fetch_one, fetch, nxt[1])] = nxt[0]
        if not running:
            break
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for future in done:
            results[running.pop(future)] = got = future.result()
            failed = failed or isinstance(got, FetchError)
    ordered = [results[i] for i in sorted(results)]
    first = next((i for i, got in enumerate(ordered) if isinstance(got, FetchError)), None)
    return ordered if first is None else ordered[: first + 1]


def fetched_refusal(request: DependencyRequest, got: Fetched) -> str | None:
    """The pre-check a committed archive gets (bot/charts/schemas.py), on a fetched one: a
    repository's archive must not reach outside the chart either, even where the render sandbox
    is only partly confined. Remembered by the archive's sha256."""
    why = _FETCHED.get_or_make(got.digest, partial(archive_escape, got.data))
    if why is None:
        return None
    return f"{replace(request, version=got.version).describe()}: {why}; {NOT_HANDED_ON}"


def _fetch_one(fetch: Fetch, dep: RemoteDependency) -> Fetched | FetchError:
    try:
        return fetch(dep.request)
    except FetchError as exc:
        return exc


def committed_versions(tree: Tree, charts: Sequence[LocalChart]) -> dict[str, str]:
    """The version of every subchart the repository itself holds, by its directory in the
    archive: `file://` ones and vendored ones, unpacked or packaged."""
    found: dict[str, str] = {}
    for chart in charts:
        if chart.prefix:
            meta = read_chart_meta(tree, chart.directory)
            if meta is not None and meta.version:
                found[chart.prefix] = meta.version
        unpacked, packed = vendored(tree, chart.directory)
        for name, (_, version) in packed.items():
            found[f"{chart.prefix}charts/{name}/"] = version
        for name in unpacked:
            meta = read_chart_meta(tree, f"{dir_prefix(chart.directory)}charts/{name}")
            if meta is not None and meta.version:
                found[f"{chart.prefix}charts/{name}/"] = meta.version
    return found


class ReviewFetch:
    """The review's `Fetch`: the fetcher under the review's policy, which is worked out (from the
    config and the base's charts) only when some chart needs a dependency fetched."""

    def __init__(
        self,
        fetcher: DependencyFetcher,
        config: DependenciesConfig,
        base: Tree,
        offline: bool = False,
    ) -> None:
        self.fetcher, self.config, self.base, self.offline = fetcher, config, base, offline
        self._policy: FetchPolicy | None = None
        self.indexes: Pinned = {}  # each repository's index, read once by this review

    def __call__(self, request: DependencyRequest) -> Fetched:
        return self.fetcher.fetch(request, self.policy, self.indexes)

    @property
    def policy(self) -> FetchPolicy:
        if self._policy is None:
            self._policy = review_policy(self.config, self.base, self.offline)
        return self._policy


def review_policy(config: DependenciesConfig, base: Tree, offline: bool = False) -> FetchPolicy:
    configured = config.repositories is not None
    if config.repositories is not None:
        allowed = tuple(Access(r.url, r.name, r.registry_config) for r in config.repositories)
    else:
        allowed = tuple(Access(url) for url in base_repositories(base, find_charts(base)))
    why = "--offline was given" if offline else "dependencies.offline is set in the config"
    return FetchPolicy(
        allowed, offline or config.offline, f"fetching is off ({why})", configured=configured
    )
