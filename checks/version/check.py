"""The `version` check: chart content needs a new chart version, and that version must still be free
when the PR merges — not already taken on develop, not claimed by another open PR.

The verdict itself comes from `bot.versions.claims.verdict`, the function the release board asks
too; whether a missing bump is enforced comes from the repository's practice
(`bot.versions.practice`); checks/version/findings.py turns both into findings."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.engine.chart.files import ChartMeta, read_chart_meta
from bot.engine.check import Check
from bot.engine.context import ChartContext, ChartRenders, OpenPR
from bot.engine.ct_config import load_ct_config
from bot.engine.report import Finding
from bot.versions.claims import (
    Claim,
    Rival,
    Status,
    Verdict,
    claim_between,
    open_claims,
    pr_label,
    rivals_of,
    verdict,
)
from bot.versions.practice import Practice, chart_practice
from checks.version import findings
from checks.version.suggest import suggest

NAME = "version"
# The verdicts whose severity depends on whether the repository bumps per change: the others (an
# invalid version, one that goes down) are wrong whatever the practice.
BY_PRACTICE = frozenset({Status.MISSING_BUMP, Status.TAKEN, Status.RACE})


@dataclass(frozen=True)
class Assessment:
    chart: ChartRenders
    claim: Claim
    develop: ChartMeta | None
    develop_sha: str
    develop_label: str
    rivals: tuple[Rival, ...]
    verdict: Verdict
    practice: Practice | None = None  # learned only for a verdict that depends on it


def assess(ctx: ChartContext) -> Assessment | None:
    """The chart's claim at head and its verdict against the target's tip and the open PRs."""
    chart = ctx.chart
    ignore = ctx.config.version.ignore
    changed = [p for c in ctx.changes for p in (c.path, c.old_path) if p]
    claim = claim_between(chart.path, ctx.base, ctx.head, changed, ignore)
    target = ctx.target
    same_base = [pr for pr in ctx.open_prs if _targets(ctx, pr)]
    claims = open_claims(ctx.git, chart.path, same_base, target.commit, ignore, ctx.head.commit)
    rivals = rivals_of(claims)
    develop = read_chart_meta(target, chart.path)
    on_develop = ctx.develop is None or ctx.develop.commit == target.commit
    label = "develop" if on_develop else "the target branch"
    judged = verdict(claim, develop, rivals)
    a = Assessment(chart, claim, develop, target.commit, label, rivals, judged)
    return replace(a, practice=practice(ctx)) if judged.status in BY_PRACTICE else a


def practice(ctx: ChartContext) -> Practice:
    """How the repository versions this chart, from its integration branch's history and its
    `ct.yaml` (both at the target, which the PR cannot change)."""
    ct = load_ct_config(ctx.target)
    tip = ctx.develop if ctx.develop is not None else ctx.target
    return chart_practice(ctx.git, tip, ctx.chart.path, ctx.config.version.ignore, ct)


def _targets(ctx: ChartContext, pr: OpenPR) -> bool:
    """Whether `pr` merges into the same branch; unknown or unresolvable base branches count."""
    if not pr.base_ref:
        return True
    tip = ctx.git.resolve(pr.base_ref)
    return tip is None or tip == ctx.target.commit


def run(ctx: ChartContext) -> list[Finding]:
    a = assess(ctx)
    if a is None or a.claim.head is None:
        return []
    found = findings.notices(a)
    main = findings.verdict_finding(ctx, a)
    if main is not None:
        found.append(suggest(ctx, a, main))
    drift = findings.app_version_finding(ctx, a)
    if drift is not None:
        found.append(suggest(ctx, a, drift))
    return found


def explain(ctx: ChartContext) -> list[str]:
    a = assess(ctx)
    if a is None or a.claim.head is None:
        return []
    v, claim = a.verdict, a.claim
    base = claim.base.version if claim.base else "(new chart)"
    lines = [
        f"{a.chart.path}: version {base} -> {a.claim.head.version}; "
        f"{a.develop_label} at {v.develop_version}; verdict {v.status}",
        f"{a.chart.path}: content files changed: {', '.join(claim.content) or 'none'}",
    ]
    if a.practice is not None:
        lines.append(
            f"{a.chart.path}: practice {a.practice.basis}: {a.practice.reason(a.develop_label)}"
        )
    lines += [f"{a.chart.path}: {pr_label(r.pr)} claims {r.version}" for r in a.rivals]
    return lines


CHECK = Check(NAME, "Chart versions", run, "chart", explain=explain)
