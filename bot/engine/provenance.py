"""Value provenance: a finding on a rendered field moved to the values line the PR changed that
set it, per profile, where a reviewer can comment on it and a values edit can fix it.

Most chart PRs change values, not templates, and a finding on the template line that renders a
value sits outside the PR's diff. So for the profiles with a failure or warning on a rendered field
(`finding.origin`), the chart is rendered once more at head with every key the PR changed in the
profile's values (the chart's `values.yaml`, the profile's values file; a subchart's values are its
parent's, under its name) carrying a marker of its own (bot/charts/values_marks.py), and the field
is read there: the key whose marker it carries set it. One extra render per such profile, whatever
the number of keys or findings; none where the PR changed no values of the profile.

A field that carries no marker keeps its template line, as it came from the template. Where no
single key is the cause the finding keeps its template line and says why: two keys it carries
(neither inside the other), a key new at head (no base value to put back), the marked render
failing (a template that compares a marked value, say)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.charts.profiles import ValuesOverride
from bot.charts.renders import ChartSource, PendingChart, RenderSettings, start_chart
from bot.charts.values_live import live_keys
from bot.charts.values_marks import landed, overlay
from bot.engine.placing import Outcome, clipped, code, profiles_of, rewritten
from bot.engine.suggestions import Absent
from bot.model.check import Registry
from bot.model.context import ChartRenders, Context, Rendered
from bot.model.origin import MISSING, field_value
from bot.model.report import Finding, Severity, ValuesLine
from bot.model.values_keys import ChangedKey

log = logging.getLogger(__name__)

# Marked renders a review makes at most (one per chart and profile with a finding to place): a
# review of a hundred charts costs no more than this on top of its own renders.
MAX_MARKED_RENDERS = 32
TOGETHER = (
    "It stays on its template line: {keys}, which this PR changed together, all set this field, "
    "so no single one is the cause."
)
NEW_KEY = (
    "It stays on its template line: {text} at {path}:{line}, which sets this field, is new in "
    "this PR, with no base value to put back."
)
NOT_READ = (
    "It stays on its template line: where its value comes from could not be read (the render "
    "marking the values this PR changed failed on profile {profile}: {why})."
)
SPENT = (
    "It stays on its template line: where its value comes from was not read (the review's "
    f"{MAX_MARKED_RENDERS} renders for that were spent)."
)


@dataclass
class ProvenanceBudget:
    """The marked renders a review has left, and those it made (for the benchmark)."""

    renders: int = MAX_MARKED_RENDERS
    made: int = 0


@dataclass(frozen=True)
class _Trial:
    meant: Mapping[int, ChangedKey]
    fresh: frozenset[tuple[str, tuple[str, ...]]]  # keys new at head
    pending: PendingChart
    head: Rendered  # the profile's own render at head, unmarked


def attribute_values(
    findings: Sequence[Finding],
    ctx: Context,
    settings: RenderSettings,
    registry: Registry,
    budget: ProvenanceBudget,
) -> list[Finding]:
    """`findings`, each on a rendered field moved to the values line that set it (module doc); as
    they are where reading it fails (a bug costs the placing, never the review)."""
    try:
        return _attributed(findings, ctx, settings, registry, budget)
    except Exception:  # noqa: BLE001 - see the docstring
        log.exception("placing findings on values lines failed")
        return list(findings)


def _attributed(
    findings: Sequence[Finding],
    ctx: Context,
    settings: RenderSettings,
    registry: Registry,
    budget: ProvenanceBudget,
) -> list[Finding]:
    charts = {c.path: c for c in ctx.charts}
    wanted = _wanted(findings, charts)
    outcomes: dict[int, dict[str, Outcome]] = {}
    trials: dict[tuple[str, str], _Trial] = {}
    for (path, profile), indices in wanted.items():
        keys, fresh = live_keys(ctx, charts[path], profile)
        marks, meant = overlay(keys)
        if not meant:
            continue
        if budget.renders <= 0:
            for i in indices:
                outcomes.setdefault(i, {})[profile] = Outcome(note=SPENT)
            continue
        budget.renders, budget.made = budget.renders - 1, budget.made + 1
        templates = frozenset(o.path for i in indices if (o := findings[i].origin) is not None)
        pending = _start(ctx, settings, charts[path], profile, marks, templates)
        trials[(path, profile)] = _Trial(meant, fresh, pending, charts[path].head[profile])
    for (path, profile), trial in trials.items():
        rendered, why = _result(trial.pending, profile)
        for i in wanted[(path, profile)]:
            judged = _judge(findings[i], rendered, why, profile, trial)
            outcomes.setdefault(i, {})[profile] = judged
    out: list[Finding] = []
    for i, f in enumerate(findings):
        out += rewritten(f, outcomes.get(i, {}), ctx, charts, registry)
    return out


def _wanted(
    findings: Sequence[Finding], charts: Mapping[str, ChartRenders]
) -> dict[tuple[str, str], list[int]]:
    """(chart, profile) → the findings to place there: failures and warnings the PR brought, on a
    rendered field, where the profile rendered at head."""
    wanted: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(findings):
        chart = charts.get(f.chart or "")
        if f.origin is None or not f.origin.field or chart is None or f.preexisting:
            continue
        if f.severity is Severity.NOTICE:
            continue
        for profile in profiles_of(f):
            rendered = chart.head.get(profile)
            if rendered is not None and rendered.error is None:
                wanted.setdefault((chart.path, profile), []).append(i)
    return wanted


def _start(
    ctx: Context,
    settings: RenderSettings,
    chart: ChartRenders,
    profile: str,
    marks: Mapping[str, Any],
    templates: frozenset[str],
) -> PendingChart:
    """The profile rendered at head with `marks` merged last over its values; no lint, no schema
    (a marker is no value a schema's enum admits), only the findings' templates parsed."""
    over = settings.override
    marked = ValuesOverride(files=(*over.files, marks), sets=over.sets)
    head = settings.repo.tree(ctx.head.commit)
    source = ChartSource(chart.path, Absent(settings.repo, ctx.base.commit), head)
    only = replace(
        settings,
        only=(profile,),
        override=marked,
        lint=False,
        schemas=False,
        parse_only=templates,
    )
    return start_chart(source, only)


def _result(pending: PendingChart, profile: str) -> tuple[Rendered | None, str]:
    try:
        rendered = pending.renders().head.get(profile)
    except Exception as exc:  # noqa: BLE001 - a render that could not run costs only provenance
        log.exception("the marked render of profile %s failed", profile)
        return None, f"{type(exc).__name__}: {exc}"
    if rendered is None:
        return None, "no render"
    if rendered.error is not None:
        return None, rendered.error.message
    return rendered, ""


def _judge(f: Finding, rendered: Rendered | None, why: str, profile: str, trial: _Trial) -> Outcome:
    assert f.origin is not None
    if rendered is None:
        return Outcome(note=NOT_READ.format(profile=profile, why=clipped(why)))
    value = field_value(rendered.documents, f.origin)
    keys = _outermost(landed(value, trial.meant)) if value is not MISSING else []
    # A marker the field holds unmarked too is the PR's own text, not our marker: not believed.
    written = field_value(trial.head.documents, f.origin)
    if written is not MISSING and keys:
        spoofed = {(k.file, k.path) for k in landed(written, trial.meant)}
        keys = [k for k in keys if (k.file, k.path) not in spoofed]
    if not keys:
        return Outcome()  # set in the template: its line is the right one
    if len(keys) > 1:
        named = ", ".join(f"{code(k.text)} ({k.file}:{k.line})" for k in keys)
        return Outcome(note=TOGETHER.format(keys=named))
    key = keys[0]
    if (key.file, key.path) in trial.fresh:
        return Outcome(note=NEW_KEY.format(text=code(key.text), path=key.file, line=key.line))
    return Outcome(values=ValuesLine(key.file, key.line, key.dotted, key.text))


def _outermost(keys: list[ChangedKey]) -> list[ChangedKey]:
    """The keys not inside another of them: a mapping the PR changed and a key it changed within
    it are one change of the mapping."""
    return [
        k
        for k in keys
        if not any(
            o.file == k.file and len(o.path) < len(k.path) and k.path[: len(o.path)] == o.path
            for o in keys
        )
    ]
