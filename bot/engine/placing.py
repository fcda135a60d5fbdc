"""A finding placed on the values line that set its field (bot/engine/provenance.py read it): its
path, line and words; split where its profiles are placed apart; the check's values edit proposed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.model.check import Registry
from bot.model.context import ChartRenders, Context, Rendered
from bot.model.manifests import pod_spec
from bot.model.origin import find_document
from bot.model.report import Finding, Origin, ValuesLine

log = logging.getLogger(__name__)

SETS = "{text} at {path}:{line} sets {what} ({template}:{template_line})."


@dataclass(frozen=True)
class Outcome:
    """Where a finding's field came from on one profile: a values line, or why none is named."""

    values: ValuesLine | None = None
    note: str | None = None


def profiles_of(f: Finding) -> list[str]:
    named = f.data.get("profiles")
    if isinstance(named, list) and named:
        return [str(p) for p in named]
    return [f.profile] if f.profile else []


def rewritten(
    f: Finding,
    by_profile: Mapping[str, Outcome],
    ctx: Context,
    charts: Mapping[str, ChartRenders],
    registry: Registry,
) -> list[Finding]:
    """`f` as its profiles' outcomes place it: split where they place it apart."""
    if not by_profile or f.origin is None:
        return [f]
    groups: dict[Outcome, list[str]] = {}
    for profile in profiles_of(f):
        groups.setdefault(by_profile.get(profile, Outcome()), []).append(profile)
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
    f: Finding, outcome: Outcome, ctx: Context, chart: ChartRenders, registry: Registry
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
        text=code(at.text),
        path=at.path,
        line=at.line,
        what=_what(origin, chart.head.get(profiles_of(f)[0])),
        template=origin.path,
        template_line=origin.line,
    )
    # A fix written in the template is no fix for a value set in values: the values edit replaces it.
    moved = replace(
        f,
        path=at.path,
        line=at.line,
        message=f"{said} {f.message}",
        origin=replace(origin, values=at),
        suggestion=None,
        suggestion_refused=None,
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
        return f"{code(field)} of {role} {name}" if name else code(origin.field_text())
    return f"pod-level {code(origin.field_text())}"


def code(text: str) -> str:
    """A code span for PR text, its fence longer than any backtick run in it."""
    text = clipped(text, 80)
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def clipped(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
