"""A review's charts checked a window at a time, so that its memory follows the window and not the
number of charts (`--all-charts` over a repository of hundreds, a PR across every chart).

The charts come from the render pool in order. A window's charts are checked as soon as their
renders are in, while the next charts render; then what the report needs of them (their summary,
their findings, their report data) is kept, and their renders are let go: the render and parse
caches, which are bounded, are the only ones to hold them after. What the repository checks read of
the charts stays: each chart's path, name and subcharts, and the renders of those whose rendered
change the duplicates check compares with other open PRs'. A review of no more than one window's
charts keeps every render, as its result's context has always had them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from bot.charts.other_renders import OtherRenders, changed_profiles, other_renders
from bot.charts.renders import PendingChart, RenderSettings, render_error_entries
from bot.charts.selection import chart_meta
from bot.engine.provenance import ProvenanceBudget, attribute_values
from bot.engine.subcharts import attribute_subcharts
from bot.engine.suggestions import Budget, verify_suggestions
from bot.git.objects import GitReader
from bot.git.tree import GitTree
from bot.model.check import Check, Need, Registry
from bot.model.context import ChartRenders, Context, OpenPR
from bot.model.rendered_diff import rendered_diffs
from bot.model.report import NOT_REVIEWED, ChartSummary, Finding
from bot.render.probe import AssumedCapabilities

# Charts checked together. A PR touches fewer (its review is one window, as it always was); a
# review of more holds this many charts' renders at a time, besides the charts ahead rendering.
CHARTS_CHECKED_TOGETHER = 16

Progress = Callable[[int, int, str], None]


def windows(
    charts: Iterator[PendingChart],
    total: int,
    size: int = CHARTS_CHECKED_TOGETHER,
    progress: Progress | None = None,
) -> Iterator[tuple[list[PendingChart], bool]]:
    """The `total` charts `size` at a time, each window with whether it is the last; a review of
    no chart has one window, empty, where the repository checks run."""
    window: list[PendingChart] = []
    done = 0
    for chart in charts:
        window.append(chart)
        done += 1
        if progress is not None:
            progress(done, total, chart.source.path)
        if len(window) == size or done == total:
            yield window, done == total
            window = []
    if done == 0:
        yield window, True


@dataclass
class ChartsChecked:
    """What a review keeps of its charts as their windows are checked, and what every window
    shares: the checks, the render settings, the open PRs once found, the suggestions' budget."""

    enabled: Sequence[Check[Any]]
    settings: RenderSettings
    context: Callable[[tuple[OpenPR, ...]], Context]  # the review's, without charts
    others: Future[tuple[OpenPR, ...]]  # the other open PRs, found beside the first renders
    assumed: Future[AssumedCapabilities]
    sides: tuple[GitTree, GitTree]  # the merge base's tree and the head's
    explain: bool = False
    bounded: bool = False  # more charts than a window: renders are let go past their window
    diffs: bool = True  # each chart's rendered diff in its report data
    # Checks' work begun before the renders (Check.early), by check: waited for before it runs.
    early: Mapping[str, tuple[Future[None], ...]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    summaries: list[ChartSummary] = field(default_factory=list)
    chart_data: dict[str, dict[str, Any]] = field(default_factory=dict)
    explained: dict[str, list[str]] = field(default_factory=dict)
    kept: list[ChartRenders] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    provenance: ProvenanceBudget = field(default_factory=ProvenanceBudget)
    _base: Context | None = None
    _last: Context | None = None
    present: set[str] = field(default_factory=set)  # the profiles of the charts so far
    _theirs: OtherRenders | None = None

    @property
    def compares_others(self) -> bool:
        """Whether a check will read other open PRs' renders: only then are they made."""
        return any(Need.OTHER_RENDERS in c.needs for c in self.enabled)

    def await_early(self, check: str) -> None:
        """What `check` began early is done, failed or not: a failure is the run's to meet (it
        does the same work again, inside the engine's containment, and reports what failed)."""
        for work in self.early.get(check, ()):
            work.exception()

    def window_context(self, charts: tuple[ChartRenders, ...]) -> Context:
        """The context a window's chart checks read, its charts' report data begun."""
        if self._base is None:
            kube_version = self.assumed.result().kube_version
            self._base = replace(self.context(self.others.result()), kube_version=kube_version)
        assumed = self.assumed.result().to_json()
        noise = self._base.config.diff
        for chart in charts:
            diff = rendered_diffs(chart, noise) if self.diffs else {}
            self.chart_data[chart.path] = {"capabilities": assumed, **diff}
            self.present.update((*chart.base, *chart.head))
        return replace(self._base, charts=charts)

    def other_renders(self, repo: GitReader, ctx: Context) -> Future[OtherRenders] | None:
        """Other open PRs' renders of the charts, started for the duplicates check."""
        if not ctx.open_prs or not self.compares_others:
            return None
        charts = (*self.kept, *ctx.charts)
        target, base = ctx.target.commit, self.sides[0]
        return self.settings.pools.others.submit(
            other_renders, repo, target, ctx.open_prs, charts, base, self.settings, ctx.head.commit
        )

    def repo_context(
        self, ctx: Context, check: Check[Any], theirs: Future[OtherRenders] | None
    ) -> Context:
        """What a repository check reads: every chart kept, and for the duplicates check, the
        other PRs' renders (waited for only there)."""
        if Need.OTHER_RENDERS in check.needs and theirs is not None and self._theirs is None:
            self._theirs = theirs.result()
        return replace(ctx, charts=(*self.kept, *ctx.charts), other_renders=self._theirs or {})

    def said(self, check: Check[Any]) -> list[str] | None:
        return self.explained.setdefault(check.name, []) if self.explain else None

    def checked(self, ctx: Context, found: list[Finding], registry: Registry) -> None:
        """A window done: its findings' suggestions proven, subcharts named, charts summed up,
        and its renders let go where nothing reads them again."""
        everything = (*self.kept, *ctx.charts)
        # Placed first: a finding moved to its values line may propose a values edit to prove.
        found = attribute_values(found, ctx, self.settings, registry, self.provenance)
        found = verify_suggestions(found, ctx, self.settings, registry, self.budget)
        self.findings += attribute_subcharts(found, everything)
        base, head = self.sides
        for c in ctx.charts:
            self.summaries.append(
                ChartSummary(
                    path=c.path,
                    name=c.name,
                    version_base=chart_meta(base, c.path).version,
                    version_head=chart_meta(head, c.path).version,
                    profiles=tuple(sorted(set(c.base) | set(c.head))),
                    render_errors=render_error_entries(c),
                    extra={**registry.empty_chart_data(), **self.chart_data[c.path]},
                    not_reviewed=_not_reviewed(found, c.path),
                )
            )
        self.kept += [self._kept(c, ctx) for c in ctx.charts]
        self._last = ctx

    def final(self) -> Context:
        """The review's context as the repository checks read it, the lint's messages in."""
        assert self._last is not None, "windows() yields at least one window"
        return replace(self._last, charts=tuple(self.kept), other_renders=self._theirs or {})

    def _kept(self, chart: ChartRenders, ctx: Context) -> ChartRenders:
        if not self.bounded:
            return chart
        if ctx.open_prs and self.compares_others and changed_profiles(chart, ctx.config.diff):
            return chart
        return replace(chart, base={}, head={})


def _not_reviewed(findings: Sequence[Finding], chart: str) -> str | None:
    why = (f.data.get("why") for f in findings if f.rule == NOT_REVIEWED and f.chart == chart)
    return next((str(w) for w in why if w), None)
