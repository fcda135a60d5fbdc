"""The engine: a repository, a base and a head → a Report. No GitHub, no HTTP, no queue."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from bot.charts.fetching import ReviewFetch
from bot.charts.profiles import NO_OVERRIDE, ValuesOverride
from bot.charts.read_ahead import read_ahead
from bot.charts.renders import (
    ChartSource,
    PendingChart,
    RenderSettings,
    renders_in_order,
    start_chart,
)
from bot.charts.resources import Pool, Resources, process_resources
from bot.charts.selection import chart_dirs
from bot.engine.chart_windows import CHARTS_CHECKED_TOGETHER, ChartsChecked, windows
from bot.engine.check_runs import apply_overrides, run_check
from bot.errors import ChartReviewError
from bot.git import shallow
from bot.git.objects import OBJECT_ID_RE, ChangedFile, Commit, GitReader
from bot.git.refs import DEVELOP_CANDIDATES, integration_branch
from bot.kube.capabilities import Capabilities
from bot.model.check import Check, Need, Registry
from bot.model.config import CONFIG_PATH, Config, parse_config
from bot.model.context import (
    Context,
    OpenPR,
    PullRequestInfo,
    RepoResolver,
    no_links,
)
from bot.model.ct_config import NO_CT, CtConfig, load_ct_config
from bot.model.report import (
    Finding,
    Report,
    sort_findings,
)
from bot.model.rivals import branch_name, comparable_prs
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.deps.fetcher import DependencyFetcher, HelmFetcher
from bot.render.probe import assumed_capabilities

log = logging.getLogger(__name__)
# A PR's commits read for their messages: more is a branch history, not a change's.
MAX_COMMITS = 250


class ReviewError(ChartReviewError):
    """The review could not run at all (unknown ref, unreadable config): exit 2, or a failed job."""


@dataclass(frozen=True)
class ReviewInput:
    base: str  # the branch (or commit) the PR targets
    head: str
    develop: str | None = None  # the integration branch; None → as bot/git/refs.py decides
    charts: tuple[str, ...] = ()  # only these chart directories; () → the ones the PR touches
    all_charts: bool = False
    profiles: tuple[str, ...] = ()  # only these profiles; () → all
    release_name: str | None = None
    namespace: str | None = None
    open_prs: tuple[OpenPR, ...] = ()
    # Or the open PRs still being found (the command line walks hundreds of refs for them): the
    # charts render meanwhile, and the review waits for them where it first reads them.
    open_prs_found: Future[tuple[OpenPR, ...]] | None = None
    pr: PullRequestInfo = PullRequestInfo()
    links: RepoResolver = no_links
    only_checks: tuple[str, ...] = ()  # () → every enabled check
    # What to render for (bot/kube/capabilities.py, already parsed); each replaces the config's.
    kube_version: str | None = None
    api_versions: tuple[str, ...] = ()
    # The config file, read at the target as always (the Action's `config` input may move it).
    config_path: str = CONFIG_PATH
    values: ValuesOverride = NO_OVERRIDE  # the command line's --values / --set, on every profile
    offline: bool = False  # fetch no dependency from a repository (the store may still hold it)
    # The charts' rendered diff in the report (`extra["diff"]`): a caller that prints none (the
    # replay's table) leaves it out, a fifth of a replay's own CPU.
    rendered_diff: bool = True
    # Told (charts done, charts in all, the chart just rendered) as a long review goes.
    progress: Callable[[int, int, str], None] | None = None
    # The branch `base` names, where `base` is a commit (the App, the Action, a replay): how
    # messages name it. None: `base` itself, unless it is a commit id.
    base_name: str | None = None
    # A replay's change's time: what was released is read as it was then. None: now.
    as_of: int | None = None


@dataclass(frozen=True)
class _GitFacts:
    """What the engine reads from git before rendering; `commits` is still being listed."""

    target: str
    head: str
    merge_base: str
    config: Config
    develop: str | None
    changes: tuple[ChangedFile, ...]
    commits: Future[tuple[Commit, ...]] | None
    ct: CtConfig = NO_CT  # the repository's chart-testing policy, at the target
    develop_name: str | None = None  # the integration branch's name, where it was found by one


@dataclass
class Timings:
    """Where a review's time went, for the benchmark."""

    render: float = 0.0
    checks: float = 0.0
    total: float = 0.0
    by_check: dict[str, float] = field(default_factory=dict)

    def add(self, check: str, seconds: float) -> None:
        self.by_check[check] = self.by_check.get(check, 0.0) + seconds


@dataclass(frozen=True)
class ReviewResult:
    report: Report
    context: Context
    explanations: tuple[str, ...] = ()


class Engine:
    """Reviews with the checks of `registry` (the edge passes `checks.REGISTRY`), on the pools and
    memos of `resources` (the composition root's, bot/charts/resources.py; None: the process's)."""

    def __init__(
        self,
        repo: GitReader,
        renderer: Renderer,
        registry: Registry,
        cache: RenderCache | None = None,
        fetcher: DependencyFetcher | None = None,
        window: int = CHARTS_CHECKED_TOGETHER,
        resources: Resources | None = None,
    ) -> None:
        self.repo = repo
        self.renderer = renderer
        self.registry = registry
        self.cache = cache if cache is not None else RenderCache()
        # Charts' dependencies from repositories, into the machine's store (bot/render/deps/).
        self.fetcher = fetcher if fetcher is not None else HelmFetcher()
        self.timings = Timings()
        self.window = window  # charts checked together (bot/engine/chart_windows.py)
        self.resources = resources if resources is not None else process_resources()
        # Git commands that need only what is already known, beside the review's own work.
        self._git: Pool = self.resources.pools.git

    def _known(self, known: dict[str, str | None], ref: str, what: str) -> str:
        sha = known.get(ref)
        if sha is None:
            raise ReviewError(f"{what} '{ref}' is not a commit in {self.repo.path}")
        return sha

    def _develop(
        self,
        requested: str | None,
        config: Config,
        known: dict[str, str | None],
        ct: CtConfig = NO_CT,
    ) -> tuple[str | None, str | None]:
        """The integration branch's commit and name: the one asked for, which must exist, else
        the one bot/git/refs.py names."""
        if requested:
            return self._known(known, requested, "--develop"), requested
        found = integration_branch(self.repo, config.develop, known, target_refs=ct.target_refs)
        return (found.sha, found.name) if found else (None, None)

    def _git_facts(self, inp: ReviewInput) -> _GitFacts:
        # One git call for every ref the review may need: each subprocess costs a millisecond.
        known = self.repo.resolve_many([inp.base, inp.head, inp.develop or "", *DEVELOP_CANDIDATES])
        target = self._known(known, inp.base, "base")
        head = self._known(known, inp.head, "head")
        # The PR's commits, unless it brings its own list (from GitHub), and the merge base from
        # the same git process where its boundary says it: a process fewer per review.
        listed_f = (
            None
            if inp.pr.commits
            else self._git.submit(self.repo.fork_log, target, head, max_count=MAX_COMMITS)
        )
        merge_base_f = None if listed_f else self._git.submit(self.repo.merge_base, target, head)
        changes_f = self._git.submit(self.repo.changes_from_merge_base, target, head)
        config = self.load_config(target, inp.config_path)
        ct = load_ct_config(self.repo.tree(target))  # CtConfigError names the file and line
        names = (inp.base, inp.head)
        merge_base, commits = self._fork(target, head, merge_base_f, listed_f, names)
        develop, develop_name = self._develop(inp.develop, config, known, ct)
        changes = changes_f.result()
        if changes is None:  # no merge base, or several: measured against the one chosen above
            changes = self.repo.changes(merge_base, head)
        return _GitFacts(
            target, head, merge_base, config, develop, changes, commits, ct, develop_name
        )

    def _fork(
        self,
        target: str,
        head: str,
        merge_base_f: Future[str | None] | None,
        listed_f: Future[tuple[tuple[Commit, ...], str | None]] | None,
        names: tuple[str, str],
    ) -> tuple[str, Future[tuple[Commit, ...]] | None]:
        """The merge base, and the PR's commits as listed. None found (a shallow clone, unrelated
        histories) is refused, never measured from the target's tip (bot/git/shallow.py)."""
        where = str(self.repo.path)
        if listed_f is None:
            assert merge_base_f is not None
            found = merge_base_f.result()
            if found is None:
                raise shallow.missing_merge_base(self.repo, where, *names)
            return found, None
        commits, merge_base = listed_f.result()
        if merge_base is None:  # several, none, or a list cut short: git decides, as before
            merge_base = shallow.merge_base(self.repo, where, target, head, names)
            listed = self._git.submit(self.repo.log, f"{merge_base}..{head}", max_count=MAX_COMMITS)
            return merge_base, listed
        done: Future[tuple[Commit, ...]] = Future()
        done.set_result(commits)
        return merge_base, done

    def review(self, inp: ReviewInput, explain: bool = False) -> ReviewResult:
        """The review, its memos in its resources' store (and in every thread it starts)."""
        with self.resources.active():
            return self._review(inp, explain)

    def _review(self, inp: ReviewInput, explain: bool) -> ReviewResult:
        started = time.perf_counter()
        known = self._git_facts(inp)
        target, head, merge_base, config = known.target, known.head, known.merge_base, known.config
        base_tree, head_tree = self.repo.tree(merge_base), self.repo.tree(head)
        release = inp.release_name or config.release_name or "release"
        namespace = inp.namespace or config.namespace or "default"
        capabilities = Capabilities(
            inp.kube_version or config.kube_version,
            inp.api_versions or tuple(config.api_versions),
        )

        dirs = chart_dirs(
            base_tree,
            head_tree,
            known.changes,
            inp.charts or tuple(config.charts or ()),
            inp.all_charts,
            known.ct,
        )
        # Read from Helm (by rendering a probe) before the charts' renders fill the render
        # processes, where a cache does not have it yet.
        assumed_f = self._git.submit(assumed_capabilities, capabilities, self.renderer, self.cache)
        ahead = self._git.submit(_read_ahead, self.repo, target, inp, head, dirs)
        sources = [ChartSource(d, base_tree, head_tree) for d in dirs]
        # The allow-list is the target's, as the config is: a PR cannot add a host to its review.
        fetch = ReviewFetch(self.fetcher, config.dependencies, self.repo.tree(target), inp.offline)
        enabled = self.enabled_checks(config, inp.only_checks)
        settings = RenderSettings(
            config,
            self.renderer,
            self.cache,
            self.repo,
            release,
            namespace,
            self.resources.pools,
            only=inp.profiles,
            capabilities=capabilities,
            override=inp.values,
            fetch=fetch,
            # `helm lint` costs more than the render: only when a check will read it.
            lint=any(Need.LINT in c.needs for c in enabled),
        )
        # Every chart's profiles go to the render pool as the charts are read, not chart by chart;
        # the charts come back in the order of `dirs`.
        starts = (partial(start_chart, s, settings) for s in sources)

        target_name = branch_label(inp.base_name or inp.base)
        develop_name = (
            target_name
            if known.develop in (None, target)
            else branch_label(known.develop_name or "the integration branch")
        )

        begun = Context(
            config=config,
            git=self.repo,
            base=base_tree,
            head=head_tree,
            target=self.repo.tree(target),
            develop=self.repo.tree(known.develop) if known.develop else None,
            changes=known.changes,
            charts=(),
            open_prs=(),
            pr=inp.pr,
            links=inp.links,
            release_name=release,
            namespace=namespace,
            target_name=target_name,
            develop_name=develop_name,
            as_of=inp.as_of,
        )
        early = _early_work(self._git, enabled, begun, dirs)

        def context(others: tuple[OpenPR, ...]) -> Context:
            commits = known.commits
            return replace(
                begun,
                open_prs=comparable_prs(self.repo, target, target_name, head, others),
                pr=inp.pr if commits is None else replace(inp.pr, commits=commits.result()),
            )

        run = ChartsChecked(
            enabled,
            settings,
            context,
            others=ahead,
            assumed=assumed_f,
            sides=(base_tree, head_tree),
            explain=explain,
            bounded=len(sources) > self.window,
            diffs=inp.rendered_diff,
            early=early,
        )
        t0 = time.perf_counter()
        handed = renders_in_order(starts, self.resources.sizes.charts_ahead)
        for window, last in windows(handed, len(sources), self.window, inp.progress):
            self.timings.render += time.perf_counter() - t0  # the window's renders, waited for
            self._check_window(run, window, last, inp.profiles)
            t0 = time.perf_counter()
        ctx = run.final()
        findings = sort_findings(apply_overrides(run.findings, config))
        report = Report(
            base=merge_base,
            head=head,
            target=target,
            charts=tuple(run.summaries),
            findings=findings,
            checks_run=tuple(c.name for c in enabled),
        )
        self.timings.total += time.perf_counter() - started
        explanations = [line for c in enabled for line in run.explained.get(c.name, [])]
        return ReviewResult(report, ctx, tuple(explanations))

    def _check_window(
        self,
        run: ChartsChecked,
        window: Sequence[PendingChart],
        last: bool,
        profiles: Sequence[str],
    ) -> None:
        """One window of charts, whose renders are in (`helm lint` may still run): every chart
        check on each; in the last window, the repository checks too, on every chart kept."""
        t0 = time.perf_counter()
        charts = tuple(chart.renders() for chart in window)
        ctx = run.window_context(charts)
        self.timings.render += time.perf_counter() - t0
        if last:
            _check_profiles_exist(profiles, run.present, bool(run.kept or charts))
        # What the duplicates check compares this PR's rendered change with: renders too, made
        # while the checks before it run (Helm works in its own processes meanwhile). Started
        # after the diffs the window's context made, which it reads, so that no two threads make
        # the same diff.
        theirs = run.other_renders(self.repo, ctx) if last else None
        t1 = time.perf_counter()
        found: list[Finding] = []
        # The checks reading lint last, as their renders' lint comes in while the others run.
        for check in sorted(run.enabled, key=lambda c: Need.LINT in c.needs):
            if check.scope == "repo" and not last:
                continue
            c0 = time.perf_counter()
            run.await_early(check.name)
            if Need.LINT in check.needs:
                ctx = replace(ctx, charts=tuple(chart.result() for chart in window))
                self.timings.render += time.perf_counter() - c0
                c0 = time.perf_counter()
            if check.scope == "repo":
                repo_ctx = run.repo_context(ctx, check, theirs)
                self.timings.render += time.perf_counter() - c0
                c0 = time.perf_counter()
                found += run_check(check, repo_ctx, {}, run.said(check))
            else:
                found += run_check(check, ctx, run.chart_data, run.said(check))
            self.timings.add(check.name, time.perf_counter() - c0)
        done = tuple(chart.result() for chart in window)
        self.timings.checks += time.perf_counter() - t1
        run.checked(replace(ctx, charts=done), found, self.registry)

    def load_config(self, commit: str, path: str = CONFIG_PATH) -> Config:
        text = self.repo.tree(commit).text(path)
        # ConfigError names the key and line
        return parse_config(text, source=path, known_checks=self.registry.options)

    def enabled_checks(self, config: Config, only: Sequence[str]) -> list[Check[Any]]:
        return [c for c in self.registry if config.enabled(c.name) and (not only or c.name in only)]


def _early_work(
    pool: Pool, enabled: Sequence[Check[Any]], ctx: Context, dirs: Sequence[str]
) -> dict[str, tuple[Future[None], ...]]:
    """Each check's work that needs no render, begun on every chart while Helm renders."""
    return {
        check.name: tuple(pool.submit(check.early, ctx, chart) for chart in dirs)
        for check in enabled
        if check.early is not None and check.scope == "chart"
    }


def _other_prs(inp: ReviewInput, head: str) -> tuple[OpenPR, ...]:
    """The open PRs besides the one under review (as given, or once found)."""
    found = inp.open_prs if inp.open_prs_found is None else inp.open_prs_found.result()
    return tuple(p for p in found if p.head != head)


def _read_ahead(
    repo: GitReader, target: str, inp: ReviewInput, head: str, charts: Sequence[str]
) -> tuple[OpenPR, ...]:
    """The other open PRs, once found, with what the checks will ask git about them read."""
    others = _other_prs(inp, head)
    if others:
        read_ahead(repo, target, others, charts)
    return others


def branch_label(ref: str) -> str:
    """How messages name a branch given as a ref: `main` for `origin/main` or
    `refs/heads/main`; a commit id names no branch."""
    return "the target branch" if OBJECT_ID_RE.fullmatch(ref) else branch_name(ref)


def _check_profiles_exist(requested: Sequence[str], present: set[str], any_chart: bool) -> None:
    """A profile asked for that no chart under review has, at base or head, is a mistake to say,
    not an empty review that passes."""
    if not any_chart:
        return
    missing = [name for name in requested if name not in present]
    if missing:
        raise ReviewError(
            f"--profile {missing[0]}: no chart under review has that profile at base or head"
        )
