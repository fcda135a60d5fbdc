"""Charts in a repository at two commits: which ones a review covers, and their renders per profile."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from bot.charts.crds import SideCapabilities, chart_capabilities
from bot.charts.dependencies import DependencyError
from bot.charts.fetching import Fetch, fetch_dependencies
from bot.charts.helm_input import (
    ChartArchiver,
    checked_charts,
    schema_files,
    unsafe_schemas,
)
from bot.charts.lint_plan import (
    lint_at_head,
    lint_matters,
    output_twins,
    says_something,
)
from bot.charts.profile_render import render_profile
from bot.charts.profiles import (
    NO_OVERRIDE,
    Profile,
    ValuesOverride,
    discover_profiles,
)
from bot.charts.resources import Pool, Pools
from bot.charts.selection import chart_meta
from bot.git.objects import GitReader
from bot.git.tree import GitTree
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.model.chart_files import (
    chart_file,
)
from bot.model.config import Config
from bot.model.context import ChartRenders, Rendered, RenderError
from bot.model.report import RenderErrorEntry
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.lint import can_lint

SIDES = ("base", "head")


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
class RenderSettings:
    """What every chart of one review is rendered with. `capabilities` are the review's own
    (config, command line), to which each side adds its chart's CRDs; `override` (the command
    line's --values / --set) applies to every profile; `fetch` gets dependencies from repositories
    (without it only what is committed is rendered); `lint`: also `helm lint` each profile;
    `pools`: the review's (bot/charts/resources.py), where the renders and lints run."""

    config: Config
    renderer: Renderer
    cache: RenderCache
    repo: GitReader
    release: str
    namespace: str
    pools: Pools
    only: Sequence[str] = ()  # profiles; () → all
    capabilities: Capabilities = DEFAULT_CAPABILITIES
    override: ValuesOverride = NO_OVERRIDE
    fetch: Fetch | None = None
    lint: bool = False
    # Parse only these templates' objects (repository paths): other open PRs' renders, of which
    # the duplicates check reads only the objects this PR changed (bot/charts/other_renders.py).
    parse_only: frozenset[str] | None = None
    # Validate values against the charts' `values.schema.json`. Off only for the render that marks
    # values to see where they land (bot/engine/provenance.py): a marker is no value a schema's
    # enum or pattern admits, and that render's objects are read for nothing else.
    schemas: bool = True


@dataclass(frozen=True)
class _Job:
    side: str
    profile: Profile
    tree: GitTree
    archiver: ChartArchiver
    caps: SideCapabilities


class PendingChart:
    """A chart whose profiles are in the render pool: `renders()` waits for their renders,
    `result()` for their lint too. Started charts render side by side, so a review of many charts
    keeps every worker busy."""

    def __init__(
        self,
        source: ChartSource,
        renders: tuple[dict[str, dict[str, Rendered]], dict[str, dict[str, Future[Rendered]]]],
        profiles: dict[str, Profile],
        facts: tuple[dict[str, str], dict[str, dict[str, str]], dict[str, Mapping[str, str]]],
        lint: Callable[[str, Iterable[str]], dict[str, Future[Rendered]]] | None = None,
        early: Mapping[str, Future[Rendered]] | None = None,
        chains: Pool | None = None,
    ) -> None:
        self.source, (self._sides, self._pending) = source, renders
        self._chains = chains  # where a lint waits on the head's to start the base's
        self._profiles = profiles
        self._refused, self._unvalidated, self._dependencies = facts
        self._lint = lint
        self._early = dict(early or {})  # head profiles' lints asked from the start (_linted_early)
        self._renders: ChartRenders | None = None
        self._linting: Future[dict[str, dict[str, Rendered]]] | None = None

    def renders(self) -> ChartRenders:
        """The chart's renders, once they are in, without waiting for `helm lint`: what every check
        but lint reads. From here the lint runs where it can matter (`_start_lint`); `result()`
        waits for it."""
        if self._renders is None:
            for side, futures in self._pending.items():
                self._sides[side].update({n: future.result() for n, future in futures.items()})
            self._pending = {}  # the futures' archives and values are not held past their renders
            if self._lint is not None:
                # The other lints are known now (the PR changed those renders): asked while the
                # early ones run.
                later = self._lint("head", self._changed())
                self._linting = self._start_lint(self._lint, {**self._early, **later})
            self._lint = None
            self._renders = self._chart(self._sides["base"], self._sides["head"])
        return self._renders

    def result(self) -> ChartRenders:
        """The renders with their lint: each linted profile's render as the checks read it, with
        the messages of its lint (a second request with the same inputs) attached."""
        renders = self.renders()
        if self._linting is None:
            return renders
        linted, self._linting = self._linting.result(), None
        base, head = (
            {n: _with_lint(r, linted.get(side, {}).get(n)) for n, r in renders.side(side).items()}
            for side in SIDES
        )
        self._renders = self._chart(base, head)
        return self._renders

    def _changed(self) -> list[str]:
        """The head profiles not linted early whose lint may say what the base's does not, but
        for those whose render is another's byte for byte (output_twins)."""
        base, head = self._sides["base"], self._sides["head"]
        names = [n for n in sorted(head) if n not in self._early and lint_matters(n, base, head)]
        twins = output_twins(head, [*self._early, *names], first=list(self._early))
        return [n for n in names if n not in twins]

    def _start_lint(
        self,
        lint: Callable[[str, Iterable[str]], dict[str, Future[Rendered]]],
        at_head: dict[str, Future[Rendered]],
    ) -> Future[dict[str, dict[str, Rendered]]]:
        """`helm lint` at head where the PR can have changed what it says (lint_at_head: those
        under way, and the first profile that rendered if the first did not); then, in a thread
        that only waits, at base where the head's says something."""
        base, head = self._sides["base"], self._sides["head"]
        wanted = lint_at_head(base, head)
        twins = output_twins(head, wanted, first=list(at_head))
        at_head.update(lint("head", [n for n in wanted if n not in at_head and n not in twins]))
        at_head = {n: f for n, f in at_head.items() if n in wanted}
        assert self._chains is not None, "a chart that lints is given its pool"
        return self._chains.submit(_then_base, lint, base, wanted, at_head, twins)

    def _chart(self, base: dict[str, Rendered], head: dict[str, Rendered]) -> ChartRenders:
        source = self.source
        meta = (
            chart_meta(source.head, source.path)
            if source.exists("head")
            else chart_meta(source.base, source.path)
        )
        return ChartRenders(
            path=source.path,
            name=meta.name or source.path.rsplit("/", 1)[-1],
            base=base,
            head=head,
            profiles={n: _spec(p) for n, p in self._profiles.items()},
            refused=self._refused,
            unvalidated=self._unvalidated,
            dependencies=self._dependencies,
        )


def _then_base(
    lint: Callable[[str, Iterable[str]], dict[str, Future[Rendered]]],
    base: Mapping[str, Rendered],
    wanted: Sequence[str],
    at_head: Mapping[str, Future[Rendered]],
    twins: Mapping[str, str] | None = None,
) -> dict[str, dict[str, Rendered]]:
    """The head's lints (a profile in `twins` has its twin's); where they say something the base
    may already have said, the base's: on the same profiles, or on every base profile where the
    PR adds one (checks/lint.py compares an added profile with them all)."""
    head = {n: future.result() for n, future in at_head.items()}
    head |= {n: head[twin] for n, twin in (twins or {}).items() if twin in head}
    if not says_something(head[n] for n in wanted if n in head):
        return {"head": head}
    added = any(n not in base for n in wanted)
    asked = sorted(base) if added else [n for n in wanted if n in base]
    alike = output_twins(base, asked)
    relinted = lint("base", [n for n in asked if n not in alike])
    linted = {n: future.result() for n, future in relinted.items()}
    return {"head": head, "base": linted | {n: linted[t] for n, t in alike.items() if t in linted}}


def _with_lint(rendered: Rendered, linted: Rendered | None) -> Rendered:
    """The render the checks read, with the lint messages of the request that linted it (None:
    not linted there)."""
    return rendered if linted is None or linted is rendered else replace(rendered, lint=linted.lint)


def render_chart(source: ChartSource, settings: RenderSettings) -> ChartRenders:
    return start_chart(source, settings).result()


def start_chart(source: ChartSource, settings: RenderSettings) -> PendingChart:
    """Reads what the chart's renders need (here, in the caller's thread) and hands its profiles to
    the render pool, without waiting for them."""
    sides: dict[str, dict[str, Rendered]] = {"base": {}, "head": {}}
    refused: dict[str, str] = {}
    unvalidated: dict[str, dict[str, str]] = {}
    all_profiles: dict[str, Profile] = {}
    dependencies: dict[str, Mapping[str, str]] = {}
    jobs: list[list[_Job]] = []
    archivers: dict[str, ChartArchiver] = {}
    for side in SIDES:
        if not source.exists(side):
            continue
        tree = source.tree(side)
        config, only = settings.config, settings.only
        profiles = discover_profiles(
            source.path,
            tree.paths(source.path),
            config.profiles_for(source.path),
            settings.override,
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
        if not settings.schemas:
            unvalidated[side].update(dict.fromkeys(schema_files(tree, charts), "not validated"))
        fetched = fetch_dependencies(tree, charts, settings.fetch, settings.pools.fetch)
        if isinstance(fetched, RenderError):
            sides[side] = {n: Rendered(n, error=fetched) for n in profiles}
            continue
        dependencies[side] = fetched.versions or {}
        repo = settings.repo
        archiver = ChartArchiver(repo, tree, charts, frozenset(unvalidated[side]), fetched)
        caps = chart_capabilities(repo, tree, source.path, settings.capabilities, charts)
        jobs.append([_Job(side, p, tree, archiver, caps) for p in profiles.values()])
        archivers[side] = archiver
    pending: dict[str, dict[str, Future[Rendered]]] = {}
    # The same chart at both sides: the base's lint is the head's (one key, one request).
    same = len(archivers) == 2 and archivers["base"].content_id() == archivers["head"].content_id()
    # A profile alike at both sides of the same chart is one render: submitted once, its future
    # shared. Handed to the pool twice, the second would hold a worker waiting on the first's.
    alike: dict[tuple[str, str | None], tuple[_Job, Future[Rendered]]] = {}
    linted_early = _linted_early(jobs, sides) if _lints(settings) and not same else frozenset()
    early: dict[str, Future[Rendered]] = {}
    # Sides alternate, so one worker builds the head's archive while another builds the base's;
    # the profiles linted early go first, each render followed by its lint, as the last lint to
    # end ends the chart.
    alternating = [j for batch in itertools.zip_longest(*jobs) for j in batch if j is not None]
    for job in sorted(
        alternating, key=lambda j: not (j.side == "head" and j.profile.name in linted_early)
    ):
        # The same chart at both sides is linted with its render (the base's lint is the head's);
        # else the lint is asked apart: at once where lint_at_head will surely want it, or once
        # both sides' renders say where it can matter (PendingChart.renders). The render stays
        # apart from it, so the checks read it without waiting for Helm's lint.
        lint = settings.lint and same
        key = (job.profile.name, _values_id(job))
        twin = alike.get(key) if same else None
        if twin is not None and (twin[0].profile, twin[0].caps) == (job.profile, job.caps):
            future = twin[1]
        else:
            future = _submit(source, settings, job, lint)
            alike[key] = (job, future)
        pending.setdefault(job.side, {})[job.profile.name] = future
        if job.side == "head" and job.profile.name in linted_early:
            early[job.profile.name] = _submit(source, _lint_only(settings), job, lint=True)
    by_side = {
        side: {j.profile.name: j for batch in jobs for j in batch if j.side == side}
        for side in SIDES
    }
    return PendingChart(
        source,
        (sides, pending),
        all_profiles,
        (refused, unvalidated, dependencies),
        partial(_lint_jobs, source, settings, by_side) if _lints(settings) and not same else None,
        early,
        settings.pools.lint,
    )


def _linted_early(
    jobs: Sequence[Sequence[_Job]], preset: Mapping[str, Mapping[str, Any]]
) -> frozenset[str]:
    """The head profiles lint_at_head will want whatever the renders say (if they render): the
    first, and those the base lacks. Linted from the start: lint costs 10-15 renders, and waiting
    for every render to decide would leave a worker idle meanwhile."""
    head = sorted(j.profile.name for batch in jobs for j in batch if j.side == "head")
    base = {j.profile.name for batch in jobs for j in batch if j.side == "base"} | set(
        preset["base"]
    )
    return frozenset(head[:1] + [n for n in head if n not in base])


def _values_id(job: _Job) -> str | None:
    """The blob of the profile's values file at the job's side (None: no file, or none there)."""
    if job.profile.values_path is None:
        return None
    entry = job.tree.entry(job.profile.values_path)
    return entry.oid if entry is not None else None


def _submit(
    source: ChartSource, settings: RenderSettings, job: _Job, lint: bool
) -> Future[Rendered]:
    return settings.pools.render.submit(
        render_profile,
        job.tree,
        source.path,
        job.profile,
        job.archiver,
        settings.renderer,
        settings.cache,
        settings.release,
        settings.namespace,
        job.caps,
        lint,
        settings.parse_only,
    )


def _lints(settings: RenderSettings) -> bool:
    return settings.lint and can_lint(settings.renderer)


def _lint_jobs(
    source: ChartSource,
    settings: RenderSettings,
    jobs: Mapping[str, Mapping[str, _Job]],
    side: str,
    profiles: Iterable[str],
) -> dict[str, Future[Rendered]]:
    """The side's profiles rendered again with their lint (one request renders and lints, as lint
    renders anyway). Only the lint is kept (PendingChart.result), so nothing is parsed."""
    found = jobs.get(side, {})
    lint_only = _lint_only(settings)
    return {n: _submit(source, lint_only, found[n], lint=True) for n in profiles if n in found}


def _lint_only(settings: RenderSettings) -> RenderSettings:
    """For a lint request: only its messages are kept, so its render is parsed nowhere."""
    return replace(settings, parse_only=frozenset())


def render_in_order(
    starts: Iterable[Callable[[], PendingChart]], ahead: int
) -> Iterator[ChartRenders]:
    """Each chart's renders and lint, in the order of `starts` (renders_in_order)."""
    return (chart.result() for chart in renders_in_order(starts, ahead))


def renders_in_order(
    starts: Iterable[Callable[[], PendingChart]], ahead: int
) -> Iterator[PendingChart]:
    """Each chart once its renders are in (its lint may still run), in the order of `starts`, with
    up to `ahead` charts started and rendering meanwhile: enough to keep the pool busy across
    charts with few profiles, few enough that a review of a hundred charts does not hold every
    chart's archive at once. Charts whose lint is still running count too: past `ahead` of them,
    the oldest's is waited for."""
    window: deque[PendingChart] = deque()
    linting: deque[PendingChart] = deque()

    def handed(chart: PendingChart) -> PendingChart:
        chart.renders()
        linting.append(chart)
        if len(linting) > ahead:
            linting.popleft().result()
        return chart

    for start in starts:
        window.append(start())
        if len(window) >= ahead:
            yield handed(window.popleft())
    while window:
        yield handed(window.popleft())


def _spec(profile: Profile) -> Any:
    from bot.model.config import ProfileSpec

    return ProfileSpec(
        name=profile.name,
        values_file=profile.values_path,
        values=dict(profile.inline) if profile.inline is not None else None,
        arbitrary_uid=profile.arbitrary_uid,
    )


def render_error_entries(renders: ChartRenders) -> tuple[RenderErrorEntry, ...]:
    """Every failed render of the chart, for the JSON report's `render_errors`."""
    out = []
    for side in SIDES:
        for profile, rendered in sorted(renders.side(side).items()):
            if rendered.error is not None:
                e = rendered.error
                out.append(RenderErrorEntry(side, profile, e.template, e.line, e.message))
    return tuple(out)
