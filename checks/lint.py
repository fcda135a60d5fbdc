"""The `lint` check: `helm lint` per profile, as chart-testing's `ct lint` runs it
(`helm lint CHART --values ci/X-values.yaml`, in the render sandbox), said only for what the PR
changed.

An error new at head is a failure (rule `error`), a warning new at head a warning (`warning`); a
message the base has too (same profile, file and text, its line numbers aside: a line moved is the
same message) is folded as pre-existing; Helm's info messages (`icon is recommended`) are not said.
Where the render of a profile failed, the render check already says so: lint's errors there (the
same template or schema error, said again) are left to it. Where the base did not render, a head
error is a warning (`error-base-not-rendered`). A chart nothing could be checked on (tree refused,
a dependency the review does not have, no profile rendering, a library chart) gets no lint
findings either. `--renderer helm` renders only, no lint.

Lint costs Helm about 3 ms per rendered object, far more than the render, so the base is linted
only when the head's lint says something, and nothing is linted when the check is off. The
profiles sure to be linted (the first, and any the base lacks) are linted from the start, first in
the queue beside their render, and every other check runs while Helm lints. A lint is asked of
Helm alone once its render is in, never as a second render; Helm's lint takes a path, so each
render process unpacks a side's chart once and lints every profile of it from that directory; and
a profile whose render is another's byte for byte takes that one's lint (Helm's lint reads the
chart and the render, so the same output gets the same messages)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot.git.objects import Tree
from bot.model.chart_files import read_chart_meta
from bot.model.check import Check, Need
from bot.model.context import (
    ChartContext,
    ChartRenders,
    LintMessage,
    LintSeverity,
    Rendered,
)
from bot.model.report import Finding, Severity
from checks.kit.delta import Issue, compare

NAME = "lint"
ERROR, WARNING = "error", "warning"
# An error on a profile the base could not render: lint there stopped at the render's failure, so
# whether the base had this error too is unknown.
ERROR_BASE_UNRENDERED = "error-base-not-rendered"
SEVERITY = {
    ERROR: Severity.FAILURE,
    WARNING: Severity.WARNING,
    ERROR_BASE_UNRENDERED: Severity.WARNING,
}
_RULES = {LintSeverity.ERROR: ERROR, LintSeverity.WARNING: WARNING}
_ARTICLE = {"error": "an", "warning": "a"}
# Line and column numbers in Helm's text (`d.yaml:13:17`, `yaml: line 6`): not part of what a
# message is, so that an edit above it does not make it new.
_LINE_RE = re.compile(r"(\.(?:ya?ml|tpl|json|txt)):\d+(?::\d+)?|\bline \d+")


def run(ctx: ChartContext) -> list[Finding]:
    r = ctx.chart
    if not _reviewed(ctx):
        return []
    head: dict[str, list[Issue] | None] = {}
    base: dict[str, list[Issue] | None] = {}
    versions = _version(ctx.base, r.path), _version(ctx.head, r.path)
    for profile, rendered in sorted(r.head.items()):
        known = _at_base(r, profile)
        if rendered.lint is None or known is None:
            continue  # not linted on one side: nothing to compare
        if rendered.error is not None and rendered.error.unavailable:
            continue  # a dependency the review does not have: not looked at (the render check)
        masked = _base_unrendered(r, profile)
        head[profile] = _issues(
            r.path, rendered, masked, skip_errors=rendered.error is not None, version=versions[1]
        )
        base[profile] = _issues(
            r.path, Rendered(profile, lint=known), masked, skip_errors=False, version=versions[0]
        )
    return compare(NAME, r.path, base, head, SEVERITY)


def _version(tree: Tree, chart: str) -> str | None:
    meta = read_chart_meta(tree, chart)
    return meta.version if meta is not None else None


def _reviewed(ctx: ChartContext) -> bool:
    """As the render check says a chart was not reviewed: then lint has nothing to add either."""
    r = ctx.chart
    if not r.head or "head" in r.refused:
        return False
    if all(rendered.error is not None for rendered in r.head.values()):
        return False
    meta = read_chart_meta(ctx.head, r.path)
    return meta is None or meta.chart_type != "library"


def _at_base(r: ChartRenders, profile: str) -> tuple[LintMessage, ...] | None:
    """What the head's messages on `profile` are compared with: the base's on the same profile; on
    a profile the PR adds, every base profile's (what fails everywhere at base is not the PR's);
    nothing for a chart the PR adds. None when the base was not linted there."""
    if profile in r.base:
        return r.base[profile].lint
    if not r.base:
        return ()
    linted = [rendered.lint for rendered in r.base.values() if rendered.lint is not None]
    return tuple(m for lint in linted for m in lint) if linted else None


def _base_unrendered(r: ChartRenders, profile: str) -> bool:
    rendered = r.base.get(profile)
    return rendered is not None and rendered.error is not None


def _issues(
    chart: str, rendered: Rendered, masked: bool, skip_errors: bool, version: str | None
) -> list[Issue]:
    out = []
    for message in rendered.lint or ():
        rule = _RULES.get(message.severity)
        if rule is None or (skip_errors and rule == ERROR):
            continue  # info, or the render check's to say
        if masked and rule == ERROR:
            rule = ERROR_BASE_UNRENDERED
        out.append(_issue(chart, rule, message, version))
    return out


def _issue(chart: str, rule: str, message: LintMessage, version: str | None) -> Issue:
    text = " ".join(message.message.split())
    where = message.path or chart
    at = f"{where} line {message.line}" if message.line else where
    kind = "error" if rule != WARNING else "warning"
    note = (
        " The base did not render on this profile, so whether it had this too is not known."
        if rule == ERROR_BASE_UNRENDERED
        else ""
    )
    return Issue(
        rule=rule,
        subject=where,
        container=None,
        detail=_own_version(_LINE_RE.sub(r"\1", text), version),
        title=f"{chart}: helm lint {kind} in {at}",
        message=f"`helm lint` reports {_ARTICLE[kind]} {kind} in {at}: {text}{note}",
        path=message.path,
        line=message.line,
    )


def _own_version(detail: str, version: str | None) -> str:
    """`detail` with the chart's own version, as Helm quotes it, made a placeholder: each bump
    changes it, and `version 'v0.5.29' is not a valid SemVerV2` at base is the same message as
    `version 'v0.5.30' ...` at head, a convention the PR did not start."""
    if not version:
        return detail
    for quote in ("'", '"'):
        detail = detail.replace(f"{quote}{version}{quote}", f"{quote}<version>{quote}")
    return detail


def explain(ctx: ChartContext) -> list[str]:
    """What lint said that the check does not report: info messages, profiles not compared."""
    r = ctx.chart
    if not _reviewed(ctx):
        return [f"{r.path}: lint not compared: the chart was not reviewed"]
    lines = []
    for profile, rendered in sorted(r.head.items()):
        if rendered.lint is None or _at_base(r, profile) is None:
            lines.append(f"{r.path} profile {profile}: not linted at base or head")
            continue
        lines += [
            f"{r.path} profile {profile}: helm lint info, not reported: {m.message}"
            for m in _infos(rendered.lint)
        ]
    return lines


def _infos(messages: Iterable[LintMessage]) -> list[LintMessage]:
    return [m for m in messages if m.severity == LintSeverity.INFO]


CHECK = Check(NAME, "Lint", run, "chart", explain=explain, quiet=True, needs=frozenset({Need.LINT}))
