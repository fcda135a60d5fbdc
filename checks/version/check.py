"""The `version` check: chart content changed without a `version` bump, judged by [the repository's
version rule](review.md#the-version-rule): a failure where it declares per-change bumps (or every
one of at least ten recent changes bumped), a warning where the evidence leans that way, else a
notice that says what it read; every notice and warning says how to declare the rule. Its options
live at the top level of the config (`version:`), not under `checks:`.

Also a version develop has taken since the PR branched (saying whether the merge will conflict or,
worse, merge cleanly), by the same rule; a version another open PR claims, a warning, or a notice
where versions move at release. Versions are read as Helm reads them: `v0.5.30`, `1.2` and
`0.46.00` load (only `helm lint` warns, which the lint check says where the PR brings it); a
version Helm refuses (`V1.2.3`, `1.2.3-01`) is a failure. Each names the next free version in the
repository's own form (`v0.5.31`), never below the one the head meant (`V0.46.0` → `0.46.0`).
Where develop already has every change the PR makes to the chart (the same release landed another
way), its version takes nothing: a notice (`already-on-develop`) that the PR can be closed.
appVersion drifting from version is a warning where the chart's last 3 or more versions on the
integration branch all kept them equal, a notice where fewer tell, and nothing where the chart
patches its version alone.

The verdict itself comes from `bot.versions.claims.verdict`, the function the release board asks
too; whether a missing bump is enforced comes from the repository's practice
(`bot.versions.practice`); checks/version/findings.py turns both into findings."""

from __future__ import annotations

from dataclasses import replace

from bot.model.chart_files import read_chart_meta
from bot.model.check import Check
from bot.model.context import ChartContext, Context
from bot.model.report import Finding
from bot.versions.claims import (
    Claim,
    Status,
    claim_between,
    open_claims,
    pr_label,
    rivals_of,
    verdict,
)
from bot.versions.options import VersionConfig, version_options
from bot.versions.policy import bump_rule
from bot.versions.rule import BumpRule
from checks.version import findings
from checks.version.assessment import Assessment
from checks.version.suggest import suggest

NAME = "version"
# The verdicts whose severity depends on whether the repository bumps per change: the others (an
# invalid version, one that goes down) are wrong whatever the practice.
BY_PRACTICE = frozenset({Status.MISSING_BUMP, Status.TAKEN, Status.RACE})


def assess(ctx: ChartContext) -> Assessment | None:
    """The chart's claim at head and its verdict against the target's tip and the open PRs."""
    chart = ctx.chart
    ignore = version_options(ctx.config).ignore
    claim = _claim(ctx, chart.path)
    target = ctx.target
    # The engine hands only the PRs into the same branch (bot/model/rivals.py).
    claims = open_claims(ctx.git, chart.path, ctx.open_prs, target.commit, ignore, ctx.head.commit)
    rivals = rivals_of(claims)
    develop = read_chart_meta(target, chart.path)
    label = ctx.target_name
    judged = verdict(claim, develop, rivals)
    a = Assessment(chart, claim, develop, target.commit, label, rivals, judged)
    return replace(a, practice=practice(ctx, chart.path)) if judged.status in BY_PRACTICE else a


def early(ctx: Context, chart: str) -> None:
    """The practice a missing bump is judged by, read from git while Helm renders, where the claim
    alone settles that verdict (the others need the open PRs' claims)."""
    missing = verdict(_claim(ctx, chart), read_chart_meta(ctx.target, chart), ())
    if missing.status is Status.MISSING_BUMP:
        practice(ctx, chart)


def _claim(ctx: Context, chart: str) -> Claim:
    changed = [p for c in ctx.changes for p in (c.path, c.old_path) if p]
    return claim_between(chart, ctx.base, ctx.head, changed, version_options(ctx.config).ignore)


def practice(ctx: Context, chart: str) -> BumpRule:
    """Whether the repository bumps this chart per change: what its files at the target declare,
    then what its integration branch has released and its history shows (bot/versions/policy.py);
    none of it the PR can change."""
    tip = ctx.develop if ctx.develop is not None else ctx.target
    version = version_options(ctx.config)
    return bump_rule(
        ctx.git,
        ctx.target,
        tip,
        chart,
        version.bump,
        version.ignore,
        ctx.develop_name,
        ctx.as_of,
    )


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
        lines.append(f"{a.chart.path}: practice {a.practice.basis}: {a.practice.said}")
    lines += [f"{a.chart.path}: {pr_label(r.pr)} claims {r.version}" for r in a.rivals]
    return lines


CHECK = Check(
    NAME,
    "Chart versions",
    run,
    "chart",
    explain=explain,
    early=early,
    options=VersionConfig,
    options_top_level=True,
)
