"""What `chart-review replay` prints: one row per change, then what the history adds up to."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.git.history import MergedChange
from bot.model.markdown_safe import cell, cell_code, inline
from bot.model.report import SCHEMA_VERSION, Report, Severity

# A row's verdict, worst first: the review could not run; a failure; a chart it could not review;
# a warning; nothing to say.
ERROR, FAILURE, NOT_REVIEWED, WARNING, PASS = "error", "failure", "not-reviewed", "warning", "pass"
VERDICT_ICON = {ERROR: "💥", FAILURE: "❌", NOT_REVIEWED: "⚠️", WARNING: "⚠️", PASS: "✅"}
SUBJECT_WIDTH = 60


@dataclass(frozen=True)
class ReplayRow:
    change: MergedChange
    seconds: float
    report: Report | None = None
    error: str | None = None  # why the review could not run

    @property
    def verdict(self) -> str:
        if self.report is None:
            return ERROR
        if self.report.failed:
            return FAILURE
        if self.report.not_reviewed:
            return NOT_REVIEWED
        if self.tally(Severity.WARNING):
            return WARNING
        return PASS

    def tally(self, severity: Severity) -> Counter[str]:
        """`check/rule` → how many findings of `severity` this change got."""
        found = self.report.findings if self.report else ()
        return Counter(f"{f.check}/{f.rule}" for f in found if f.severity is severity)

    def to_json(self) -> dict[str, Any]:
        c = self.change
        return {
            "commit": c.commit,
            "subject": c.subject,
            "date": c.date,
            "pr": c.number,
            "kind": c.kind,
            "base": c.base,
            "head": c.head,
            "verdict": self.verdict,
            "seconds": round(self.seconds, 3),
            "error": self.error,
            "report": self.report.to_json() if self.report else None,
        }


@dataclass(frozen=True)
class ReplaySummary:
    reviewed: int
    skipped: int  # touched a chart's path, but the engine found no chart to review there
    failures: Counter[str]
    warnings: Counter[str]
    not_reviewed: Counter[tuple[str, str]]  # (chart, why) → how many changes
    errors: tuple[tuple[str, str], ...]  # (commit, why)
    total_seconds: float
    median_seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            "reviewed": self.reviewed,
            "skipped": self.skipped,
            "failures": dict(self.failures.most_common()),
            "warnings": dict(self.warnings.most_common()),
            "not_reviewed": [
                {"chart": chart, "why": why, "changes": n}
                for (chart, why), n in self.not_reviewed.most_common()
            ],
            "errors": [{"commit": commit, "why": why} for commit, why in self.errors],
            "seconds": {
                "total": round(self.total_seconds, 3),
                "median": round(self.median_seconds, 3),
            },
        }


def summarize(rows: Sequence[ReplayRow], skipped: int, total_seconds: float) -> ReplaySummary:
    failures: Counter[str] = Counter()
    warnings: Counter[str] = Counter()
    not_reviewed: Counter[tuple[str, str]] = Counter()
    for row in rows:
        failures += row.tally(Severity.FAILURE)
        warnings += row.tally(Severity.WARNING)
        for chart in row.report.not_reviewed if row.report else ():
            not_reviewed[(chart.path, chart.not_reviewed or "")] += 1
    return ReplaySummary(
        reviewed=sum(1 for r in rows if r.report is not None),
        skipped=skipped,
        failures=failures,
        warnings=warnings,
        not_reviewed=not_reviewed,
        errors=tuple((r.change.commit, r.error or "") for r in rows if r.report is None),
        total_seconds=total_seconds,
        median_seconds=statistics.median(r.seconds for r in rows) if rows else 0.0,
    )


def replay_json(rows: Sequence[ReplayRow], summary: ReplaySummary, repo: str, branch: str) -> str:
    out = {
        "schema": SCHEMA_VERSION,
        "replay": {"repo": repo, "branch": branch},
        "changes": [r.to_json() for r in rows],
        "summary": summary.to_json(),
    }
    return json.dumps(out, indent=2) + "\n"


def replay_markdown(
    rows: Sequence[ReplayRow], summary: ReplaySummary, repo: str, branch: str
) -> str:
    lines = [
        f"## chart-review replay: {len(rows)} changes merged into {inline(branch)} of {inline(repo)}",
        "",
        "| commit | PR | change | verdict | failures | warnings | time |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines += [_row(r) for r in rows]
    lines += ["", "### Summary", "", *_summary_lines(summary)]
    return "\n".join(lines) + "\n"


def _row(r: ReplayRow) -> str:
    c = r.change
    subject = c.subject if len(c.subject) <= SUBJECT_WIDTH else c.subject[: SUBJECT_WIDTH - 1] + "…"
    verdict = f"{VERDICT_ICON[r.verdict]} {r.verdict}"
    if r.error:
        verdict += f": {cell(r.error)}"
    return (
        f"| {cell_code(c.commit[:12])} | {f'#{c.number}' if c.number else ''} | {cell(subject)} "
        f"| {verdict} | {_tally(r.tally(Severity.FAILURE))} | {_tally(r.tally(Severity.WARNING))} "
        f"| {r.seconds:.2f} s |"
    )


def _tally(counts: Counter[str]) -> str:
    return ", ".join(f"{rule}{f' ×{n}' if n > 1 else ''}" for rule, n in sorted(counts.items()))


def _summary_lines(s: ReplaySummary) -> list[str]:
    skipped = f" ({s.skipped} more touched a chart's files but held no chart to review)"
    lines = [
        f"- Changes reviewed: {s.reviewed}{skipped if s.skipped else ''}",
        f"- Failures: {sum(s.failures.values())}{_by_rule(s.failures)}",
        f"- Warnings: {sum(s.warnings.values())}{_by_rule(s.warnings)}",
        f"- Charts not reviewed: {sum(s.not_reviewed.values())}",
    ]
    lines += [
        f"  - {inline(chart)} in {n} change{'s' if n > 1 else ''}: {inline(why)}"
        for (chart, why), n in s.not_reviewed.most_common()
    ]
    lines.append(f"- Tool errors: {len(s.errors)}")
    lines += [f"  - {inline(commit[:12])}: {inline(why)}" for commit, why in s.errors]
    lines.append(
        f"- Time: {s.total_seconds:.1f} s in all, median {s.median_seconds:.2f} s a change"
    )
    return lines


def _by_rule(counts: Counter[str]) -> str:
    if not counts:
        return ""
    return " — " + ", ".join(f"{rule} {n}" for rule, n in counts.most_common())
