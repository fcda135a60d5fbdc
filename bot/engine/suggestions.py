"""One-click fixes: a finding's proposed edit (a GitHub suggested change), kept only once proven.

A check proposes (`Finding.suggestion`, from the template text it read); the engine verifies: it
applies the edit to the head as GitHub's "Commit suggestion" would, renders the patched chart on the
finding's profiles, and runs the same check on that chart again. The suggestion stays iff the patched
chart renders, the same finding is gone, and the check finds nothing new above a notice there;
otherwise it goes, and `Finding.suggestion_refused` says why. A reviewer who clicks never gets a
broken template or a fix that does not fix."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bot.charts.renders import ChartSource, PendingChart, RenderSettings, start_chart
from bot.git.objects import PatchedReader
from bot.git.tree import GitTree
from bot.model.check import Registry
from bot.model.context import ChartContext, ChartRenders, Context
from bot.model.report import Finding, Severity
from bot.model.suggestion import Suggestion, identity

log = logging.getLogger(__name__)

# Each verification is a render of one profile of a patched chart: a review proves at most this
# many, the worst findings first, so that suggestions never cost a review more than a chart or two.
MAX_RENDERS = 10
OVER_BUDGET = f"not verified: the review's {MAX_RENDERS} verification renders were spent"


@dataclass
class Budget:
    """The verification renders a review has left. A review of many charts verifies a window of
    charts at a time (bot/engine/review.py), each window spending from the one budget: the worst
    findings of a window first, the windows in the order of their charts."""

    renders: int = MAX_RENDERS


def verify_suggestions(
    findings: Sequence[Finding],
    ctx: Context,
    settings: RenderSettings,
    registry: Registry,
    budget: Budget | None = None,
) -> list[Finding]:
    """`findings`, each suggestion kept only where proven (module docstring), within `budget`
    (a review's whole budget when none is given)."""
    proposed = [i for i, f in enumerate(findings) if f.suggestion is not None]
    if not proposed:
        return list(findings)
    out = list(findings)
    left = budget if budget is not None else Budget()
    started: list[tuple[int, _Trial]] = []
    for i in sorted(proposed, key=lambda i: findings[i].severity.rank):
        trial = _start(findings[i], ctx, settings, registry, left.renders)
        if isinstance(trial, str):
            out[i] = refused(findings[i], trial)
            continue
        left.renders -= len(trial.profiles)
        started.append((i, trial))
    for i, trial in started:
        out[i] = _finish(findings[i], trial)
    return out


def refused(f: Finding, why: str) -> Finding:
    return replace(f, suggestion=None, suggestion_refused=why)


@dataclass(frozen=True)
class _Trial:
    """A patched chart rendering in the pool, and what to run on it once it has."""

    ctx: ChartContext  # the finding's chart as it was, on the profiles tried
    run: Callable[[ChartContext], list[Finding]]
    profiles: tuple[str, ...]
    pending: PendingChart
    repo: PatchedReader
    suggestion: Suggestion


def _start(
    f: Finding, ctx: Context, settings: RenderSettings, registry: Registry, budget: int
) -> _Trial | str:
    suggestion = f.suggestion
    check = registry.by_name(f.check)
    chart = next((c for c in ctx.charts if c.path == f.chart), None)
    if suggestion is None or check is None or check.scope != "chart" or chart is None:
        return "not verified: the finding names no chart its check can be run on again"
    text = ctx.head.text(suggestion.path)
    patched = suggestion.apply(text) if text is not None else None
    if patched is None:
        return f"not verified: {suggestion.path} has no lines {suggestion.start_line}-{suggestion.line}"
    profiles = _profiles(f, chart)
    if not profiles:
        return "not verified: no profile of the chart rendered at head"
    if len(profiles) > budget:
        return OVER_BUDGET
    repo = settings.repo.patched(ctx.head.commit, suggestion.path, patched.encode())
    source = ChartSource(chart.path, Absent(settings.repo, ctx.base.commit), repo.head())
    pending = start_chart(source, replace(settings, repo=repo, only=profiles, lint=False))
    tried = replace(
        chart,
        base={p: r for p, r in chart.base.items() if p in profiles},
        head={p: r for p, r in chart.head.items() if p in profiles},
    )
    return _Trial(ctx.for_chart(tried), check.run, profiles, pending, repo, suggestion)


def _profiles(f: Finding, chart: ChartRenders) -> tuple[str, ...]:
    """The profiles the finding is about (every one it groups), else the chart's first at head."""
    named = f.data.get("profiles") or ([f.profile] if f.profile else [])
    rendered = [p for p, r in sorted(chart.head.items()) if r.error is None]
    wanted = [p for p in named if p in rendered] if named else rendered[:1]
    return tuple(wanted)


def _finish(f: Finding, trial: _Trial) -> Finding:
    try:
        return _judge(f, trial)
    except Exception as exc:  # noqa: BLE001 - a failed proof only costs the suggestion
        log.exception("verifying the suggestion of %s/%s failed", f.check, f.rule)
        return refused(f, f"not verified: {type(exc).__name__}: {exc}")
    finally:
        trial.repo.close()


def _judge(f: Finding, trial: _Trial) -> Finding:
    patched = trial.pending.result()
    for profile in trial.profiles:
        rendered = patched.head.get(profile)
        if rendered is None or rendered.error is not None:
            why = rendered.error.message if rendered is not None and rendered.error else "no render"
            return refused(f, f"the suggested change does not render on profile {profile}: {why}")
    before = {identity(g) for g in trial.run(trial.ctx)}
    head = replace(trial.ctx.chart, head=patched.head)
    after_ctx = replace(trial.ctx, head=trial.repo.head(), chart=head)
    after = trial.run(after_ctx)
    if identity(f) in {identity(g) for g in after}:
        return refused(f, "the suggested change does not make this finding go away")
    new = [g for g in after if identity(g) not in before and g.severity is not Severity.NOTICE]
    if new:
        return refused(f, f"the suggested change brings a new finding: {new[0].title}")
    return replace(f, suggestion=replace(trial.suggestion, verified_on=trial.profiles))


class Absent(GitTree):
    """The side a verification (or provenance) leaves alone: only the head is rendered again."""

    def read(self, path: str) -> bytes | None:
        return None
