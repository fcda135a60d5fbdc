"""Value provenance: a finding on a rendered field moved to the values line the PR changed that
set it, per profile, where a reviewer can comment on it and a values edit can fix it.

Most chart PRs change values, not templates, and a finding on the template line that renders a
value sits outside the PR's diff. So for the profiles with a failure or warning on a rendered field
(`finding.origin`), the chart is rendered once more at head with every key the PR changed in the
profile's values (the chart's `values.yaml`, the profile's values file; a subchart's values are its
parent's, under its name) carrying a marker of its own (bot/engine/values_marks.py), and the field
is read there: the key whose marker it carries set it. One extra render per such profile, whatever
the number of keys or findings; none where the PR changed no values of the profile.

A field that carries no marker keeps its template line, as it came from the template. Where no
single key is the cause the finding keeps its template line and says why: two keys it carries
(neither inside the other), a key new at head (no base value to put back), the marked render
failing (a template that compares a marked value, say)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.engine.chart.files import dir_prefix
from bot.engine.chart.renders import ChartSource, PendingChart, RenderSettings, start_chart
from bot.engine.check import Registry
from bot.engine.context import ChartRenders, Context, Rendered
from bot.engine.manifests import pod_spec
from bot.engine.origin import MISSING, field_value, find_document
from bot.engine.profiles import ValuesOverride, load_values, merge_values
from bot.engine.report import Finding, Origin, Severity, ValuesLine
from bot.engine.suggestion import KEY, REFUSED
from bot.engine.suggestions import Absent
from bot.engine.values_keys import ABSENT, ChangedKey, changed_keys, value_at
from bot.engine.values_marks import landed, overlay

log = logging.getLogger(__name__)

# Marked renders a review makes at most (one per chart and profile with a finding to place): a
# review of a hundred charts costs no more than this on top of its own renders.
MAX_MARKED_RENDERS = 32
VALUES_FILE = "values.yaml"
SETS = "{text} at {path}:{line} sets {what} ({template}:{template_line})."
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
class _Outcome:
    values: ValuesLine | None = None
    note: str | None = None


@dataclass(frozen=True)
class _Trial:
    meant: Mapping[int, ChangedKey]
    fresh: frozenset[tuple[str, tuple[str, ...]]]  # keys new at head
    pending: PendingChart


def attribute_values(
    findings: Sequence[Finding],
    ctx: Context,
    settings: RenderSettings,
    registry: Registry,
    budget: ProvenanceBudget,
) -> list[Finding]:
    """`findings`, each on a rendered field moved to the values line that set it (module doc)."""
    charts = {c.path: c for c in ctx.charts}
    wanted = _wanted(findings, charts)
    outcomes: dict[int, dict[str, _Outcome]] = {}
    trials: dict[tuple[str, str], _Trial] = {}
    for (path, profile), indices in wanted.items():
        keys, fresh = live_keys(ctx, charts[path], profile)
        marks, meant = overlay(keys)
        if not meant:
            continue
        if budget.renders <= 0:
            for i in indices:
                outcomes.setdefault(i, {})[profile] = _Outcome(note=SPENT)
            continue
        budget.renders, budget.made = budget.renders - 1, budget.made + 1
        templates = frozenset(o.path for i in indices if (o := findings[i].origin) is not None)
        pending = _start(ctx, settings, charts[path], profile, marks, templates)
        trials[(path, profile)] = _Trial(meant, fresh, pending)
    for (path, profile), trial in trials.items():
        rendered, why = _result(trial.pending, profile)
        for i in wanted[(path, profile)]:
            judged = _judge(findings[i], rendered, why, profile, trial)
            outcomes.setdefault(i, {})[profile] = judged
    out: list[Finding] = []
    for i, f in enumerate(findings):
        out += _rewritten(f, outcomes.get(i, {}), ctx, charts, registry)
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


def profiles_of(f: Finding) -> list[str]:
    named = f.data.get("profiles")
    if isinstance(named, list) and named:
        return [str(p) for p in named]
    return [f.profile] if f.profile else []


def live_keys(
    ctx: Context, chart: ChartRenders, profile: str
) -> tuple[list[ChangedKey], frozenset[tuple[str, tuple[str, ...]]]]:
    """The keys the PR changed in the profile's values that reach its render (not replaced by a
    later layer), and those of them new at head: absent from the base's values altogether, and
    not under a subchart's name (whose own defaults a base value may be)."""
    defaults = f"{dir_prefix(chart.path)}{VALUES_FILE}"
    spec = chart.profiles.get(profile)
    files = [defaults, *([spec.values_file] if spec is not None and spec.values_file else [])]
    supplied = chart.head[profile].values
    keys: list[ChangedKey] = []
    for file in dict.fromkeys(files):
        change = ctx.changed(file)
        text = ctx.head.text(file) if change is not None and change.status != "D" else None
        if change is None or text is None:
            continue
        found = changed_keys(file, ctx.base.text(change.old_path or file), text)
        keys += [k for k in found if _live(k, supplied, file == defaults)]
    base = _base_values(ctx, chart, profile, defaults)
    subcharts = {
        d.rstrip("/").rsplit("/", 1)[-1] for side in chart.dependencies.values() for d in side
    }
    fresh = frozenset(
        (k.file, k.path)
        for k in keys
        if value_at(base, k.path) is ABSENT and k.path[0] not in subcharts
    )
    return keys, fresh


def _live(key: ChangedKey, supplied: Mapping[str, Any], defaults: bool) -> bool:
    """Whether the key's value reaches the render: a profile file's, unless a later layer (the
    config's inline values, the command line's) replaced it; the chart's defaults', unless the
    supplied values set it (or a non-mapping above it), a mapping merging with theirs."""
    if not defaults:
        now = value_at(supplied, key.path)
        return isinstance(now, Mapping) if isinstance(key.head, Mapping) else now == key.head
    node: Any = supplied
    for step in key.path:
        if not isinstance(node, Mapping):
            return False
        if step not in node:
            return True
        node = node[step]
    return isinstance(node, Mapping) and isinstance(key.head, Mapping)


def _base_values(ctx: Context, chart: ChartRenders, profile: str, defaults: str) -> dict[str, Any]:
    """The base's chart defaults with the base profile's supplied values over them."""
    text = ctx.base.text(defaults)
    try:
        values = load_values(text, defaults) if text else {}
    except Exception:  # noqa: BLE001 - the render check reports a values file that does not parse
        values = {}
    rendered = chart.base.get(profile)
    return merge_values(values, rendered.values) if rendered is not None else values


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


def _judge(
    f: Finding, rendered: Rendered | None, why: str, profile: str, trial: _Trial
) -> _Outcome:
    assert f.origin is not None
    if rendered is None:
        return _Outcome(note=NOT_READ.format(profile=profile, why=_clipped(why)))
    value = field_value(rendered.documents, f.origin)
    keys = _outermost(landed(value, trial.meant)) if value is not MISSING else []
    if not keys:
        return _Outcome()  # set in the template: its line is the right one
    if len(keys) > 1:
        named = ", ".join(f"{_code(k.text)} ({k.file}:{k.line})" for k in keys)
        return _Outcome(note=TOGETHER.format(keys=named))
    key = keys[0]
    if (key.file, key.path) in trial.fresh:
        return _Outcome(note=NEW_KEY.format(text=_code(key.text), path=key.file, line=key.line))
    return _Outcome(values=ValuesLine(key.file, key.line, key.dotted, key.text))


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


def _rewritten(
    f: Finding,
    by_profile: Mapping[str, _Outcome],
    ctx: Context,
    charts: Mapping[str, ChartRenders],
    registry: Registry,
) -> list[Finding]:
    """`f` as its profiles' outcomes place it: split where they place it apart."""
    if not by_profile or f.origin is None:
        return [f]
    groups: dict[_Outcome, list[str]] = {}
    for profile in profiles_of(f):
        groups.setdefault(by_profile.get(profile, _Outcome()), []).append(profile)
    chart = charts[f.chart or ""]
    if len(groups) == 1:
        return [_placed(f, next(iter(groups)), ctx, chart, registry)]
    return [_placed(narrowed(f, ps), o, ctx, chart, registry) for o, ps in groups.items()]


def narrowed(f: Finding, profiles: list[str]) -> Finding:
    """`f`, which names several profiles (checks/kit/delta.py's words), about `profiles` only."""
    was, now = str(f.profile), ", ".join(profiles)
    label = "profile" if len(profiles) == 1 else "profiles"
    message = re.sub(rf"^profiles? {re.escape(was)}: ", f"{label} {now}: ", f.message)
    title = f.title.replace(f" on {was}", f" on {now}")
    data = {**f.data, "profiles": list(profiles)}
    return replace(f, profile=now, title=title, message=message, data=data)


def _placed(
    f: Finding, outcome: _Outcome, ctx: Context, chart: ChartRenders, registry: Registry
) -> Finding:
    origin = f.origin
    assert origin is not None
    if outcome.note is not None:
        noted = replace(origin, note=outcome.note)
        return replace(f, origin=noted, message=f"{f.message} {outcome.note}")
    at = outcome.values
    if at is None:
        return f
    said = SETS.format(
        text=_code(at.text),
        path=at.path,
        line=at.line,
        what=_what(origin, chart.head.get(profiles_of(f)[0])),
        template=origin.path,
        template_line=origin.line,
    )
    # A fix written in the template is no fix for a value set in values: the values edit replaces it.
    data = {k: v for k, v in f.data.items() if k not in (KEY, REFUSED)}
    moved = replace(
        f,
        path=at.path,
        line=at.line,
        message=f"{said} {f.message}",
        origin=replace(origin, values=at),
        data=data,
    )
    check = registry.by_name(f.check)
    if check is None or check.values_fix is None:
        return moved
    try:
        return check.values_fix(ctx.for_chart(chart), moved)
    except Exception:  # noqa: BLE001 - a fix that cannot be written costs only the suggestion
        log.exception("the values fix of %s/%s failed", f.check, f.rule)
        return moved


def _what(origin: Origin, rendered: Rendered | None) -> str:
    """`resources` of container operator: the field under its container, as the head renders it."""
    steps = origin.field
    doc = find_document(rendered.documents, origin) if rendered is not None else None
    spec = pod_spec(doc) if doc is not None else None
    if len(steps) >= 2 and isinstance(steps[1], int) and spec is not None:
        items = spec.get(str(steps[0])) or []
        item = items[steps[1]] if isinstance(items, list) and steps[1] < len(items) else {}
        role = "init container" if steps[0] == "initContainers" else "container"
        name = item.get("name") if isinstance(item, Mapping) else None
        field = ".".join(str(s) for s in steps[2:])
        return f"{_code(field)} of {role} {name}" if name else _code(origin.field_text())
    return f"pod-level {_code(origin.field_text())}"


def _code(text: str) -> str:
    """A code span for PR text, its fence longer than any backtick run in it."""
    text = _clipped(text, 80)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _clipped(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
