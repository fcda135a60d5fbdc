"""Findings and the report: the engine's output, and its two public renderings (markdown, JSON schema 1)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from bot.textlines import git_lines

SCHEMA_VERSION = 1


# The rule of the finding that says a check stopped with an error on a chart (bot/engine/review.py).
CRASHED = "check-crashed"
# The rule of the render check's finding for a chart that nothing could be checked on: no profile
# rendered at head, or a library chart. Its check runs are neutral, never a pass.
NOT_REVIEWED = "not-reviewed"


class Severity(StrEnum):
    FAILURE = "failure"
    WARNING = "warning"
    NOTICE = "notice"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.FAILURE: 0, Severity.WARNING: 1, Severity.NOTICE: 2}
_ICON = {Severity.FAILURE: "❌", Severity.WARNING: "⚠️", Severity.NOTICE: "ℹ️"}


@dataclass(frozen=True)
class ValuesLine:
    """The values line that produced a rendered field: a key the PR changed, in the chart's
    `values.yaml`, the profile's values file, or (for a subchart) its parent's values."""

    path: str  # repository path of the values file
    line: int  # 1-based, at head
    key: str  # dotted (`operator.resources`), as `--set` names it
    text: str  # the line as written, stripped (`resources: {}`)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "key": self.key, "text": self.text}


@dataclass(frozen=True)
class Origin:
    """Where a finding's rendered field comes from: its template line, the field in the rendered
    object (from the pod spec: `("containers", 0, "resources")`), and, once the engine has read
    it (bot/engine/provenance.py), the values line that set it, or why none could be named."""

    path: str  # the template, a repository path
    line: int | None
    subject: str  # the rendered object, Kind/namespace/name
    field: tuple[str | int, ...] = ()
    values: ValuesLine | None = None
    note: str | None = None  # why the finding stays on its template line, where it is said

    def field_text(self) -> str:
        """`containers[0].resources`, as the JSON report writes the field."""
        out = ""
        for step in self.field:
            out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "subject": self.subject,
            "field": self.field_text(),
            "values": self.values.to_json() if self.values is not None else None,
            "note": self.note,
        }


@dataclass(frozen=True)
class Suggestion:
    """A finding's one-click fix (a GitHub suggested change): replace lines `start_line`..`line`
    (1-based, inclusive) of `path` at head with `replacement`, whole lines each ending in a newline
    ("" deletes the lines). A check proposes it; the engine proves it (bot/engine/suggestions.py)
    and keeps it with the profiles it was proven on."""

    path: str
    start_line: int
    line: int
    replacement: str
    verified_on: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "start_line": self.start_line,
            "line": self.line,
            "replacement": self.replacement,
        }
        if self.verified_on:
            out["verified_on"] = list(self.verified_on)
        return out

    def apply(self, text: str) -> str | None:
        """`text` with the edit made, as GitHub makes it; None when the lines are not there."""
        lines = git_lines(text, keepends=True)
        if not 1 <= self.start_line <= self.line <= len(lines):
            return None
        return "".join([*lines[: self.start_line - 1], self.replacement, *lines[self.line :]])


@dataclass(frozen=True)
class Finding:
    """One thing a reviewer would say. `rule` names the kind of finding inside its check, so that
    config can override its severity (`checks.qos.severity.downgrade: warning`)."""

    check: str
    severity: Severity
    title: str
    message: str
    rule: str = ""
    chart: str | None = None
    profile: str | None = None
    subject: str | None = None
    path: str | None = None
    line: int | None = None
    # What the check says beyond the message, for the JSON report's `data` (and its own section).
    data: Mapping[str, Any] = field(default_factory=dict)
    # `path`/`line` are where a reviewer comments: the values line when the field's value came
    # from values, else the template line. `origin` keeps the rendered origin either way.
    origin: Origin | None = None
    # Present at base and head alike (set by the check): not the PR's doing, so a notice whatever
    # the config, and folded in the markdown and the check run.
    preexisting: bool = False
    # The check's proposed fix; once the engine has tried it, kept only where proven, else gone
    # and `suggestion_refused` says why.
    suggestion: Suggestion | None = None
    suggestion_refused: str | None = None

    def with_severity(self, severity: Severity) -> Finding:
        return replace(self, severity=severity)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "rule": self.rule,
            "severity": str(self.severity),
            "chart": self.chart,
            "profile": self.profile,
            "subject": self.subject,
            "title": self.title,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "origin": self.origin.to_json() if self.origin is not None else None,
            "data": self._data_json(),
        }

    def _data_json(self) -> dict[str, Any]:
        """`data` as schema 1 has always written it: the typed fields are keys of it there."""
        out = {**self.data, "preexisting": self.preexisting}
        if self.suggestion is not None:
            out["suggestion"] = self.suggestion.to_json()
        if self.suggestion_refused is not None:
            out["suggestion_refused"] = self.suggestion_refused
        return out


@dataclass(frozen=True)
class RenderErrorEntry:
    side: str
    profile: str
    template: str | None
    line: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "side": self.side,
            "profile": self.profile,
            "template": self.template,
            "line": self.line,
            "message": self.message,
        }


@dataclass(frozen=True)
class ChartSummary:
    """What the report says of one chart, whatever the checks found."""

    path: str
    name: str
    version_base: str | None
    version_head: str | None
    profiles: tuple[str, ...]
    render_errors: tuple[RenderErrorEntry, ...] = ()
    # Per-chart data that checks give the report, by key (the QoS check gives `qos`: side -> profile
    # -> pod key -> class), and the engine's own (`capabilities`, `diff`). The engine carries the
    # checks' without knowing their shape.
    extra: Mapping[str, Any] = field(default_factory=dict)
    not_reviewed: str | None = None  # why nothing could be checked on this chart

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "name": self.name,
            "version": {"base": self.version_base, "head": self.version_head},
            "profiles": list(self.profiles),
            "render_errors": [e.to_json() for e in self.render_errors],
            "not_reviewed": self.not_reviewed,
        }
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class Report:
    base: str  # the commit the head is compared with: the merge base of target and head
    head: str
    target: str  # the tip of the branch the PR targets
    charts: tuple[ChartSummary, ...]
    findings: tuple[Finding, ...]
    checks_run: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return any(f.severity is Severity.FAILURE for f in self.findings)

    def findings_for(self, check: str) -> list[Finding]:
        return [f for f in self.findings if f.check == check]

    @property
    def not_reviewed(self) -> tuple[ChartSummary, ...]:
        return tuple(c for c in self.charts if c.not_reviewed)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_VERSION,
            "base": self.base,
            "head": self.head,
            "target": self.target,
            "charts": [c.to_json() for c in self.charts],
            "findings": [f.to_json() for f in self.findings],
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Worst first, then by where they are, so output is stable from run to run."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                f.severity.rank,
                f.check,
                f.chart or "",
                f.profile or "",
                f.subject or "",
                f.path or "",
                f.line or 0,
                f.title,
            ),
        )
    )


def counts(findings: Iterable[Finding]) -> dict[Severity, int]:
    tally = {s: 0 for s in Severity}
    for f in findings:
        tally[f.severity] += 1
    return tally


def headline(findings: Iterable[Finding]) -> str:
    tally = counts(findings)
    if not any(tally.values()):
        return "no findings"
    parts = [f"{n} {s}{'' if n == 1 else 's'}" for s, n in tally.items() if n]
    return ", ".join(parts)


def icon(severity: Severity) -> str:
    return _ICON[severity]
