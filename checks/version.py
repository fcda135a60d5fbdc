"""The `version` check: chart content needs a new chart version, and that version must still be free
when the PR merges — not already taken on develop, not claimed by another open PR.

The verdict itself comes from `bot.versions.claims.verdict`, the function the release board asks
too; this module turns it into findings with the git facts a release manager needs to act."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.engine.chart.files import ChartMeta, read_chart_meta
from bot.engine.check import Check
from bot.engine.context import ChartContext, ChartRenders, OpenPR
from bot.engine.report import Finding, Severity
from bot.versions.claims import (
    Claim,
    Rival,
    Status,
    Verdict,
    claim_between,
    merge_case,
    open_claims,
    pr_label,
    released_tag,
    rivals_of,
    verdict,
    version_origin,
)
from bot.versions.semver import parse_version

NAME = "version"
# How many changed content files a missing-bump message lists before "and N more".
LISTED_FILES = 3

CASE_TEXT = {
    "conflict": "`Chart.yaml` will conflict on merge",
    "clean": (
        "it merges *cleanly* because develop made the identical bump, so nothing fails and this "
        "PR's content would ship under a version that already names other content"
    ),
}


@dataclass(frozen=True)
class Assessment:
    chart: ChartRenders
    claim: Claim
    develop: ChartMeta | None
    develop_sha: str
    develop_label: str
    rivals: tuple[Rival, ...]
    verdict: Verdict


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
    return Assessment(
        chart, claim, develop, target.commit, label, rivals, verdict(claim, develop, rivals)
    )


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
    findings = _notices(a)
    main = _verdict_finding(ctx, a)
    if main is not None:
        findings.append(main)
    drift = _app_version_finding(a)
    if drift is not None:
        findings.append(drift)
    return findings


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
    lines += [f"{a.chart.path}: {pr_label(r.pr)} claims {r.version}" for r in a.rivals]
    return lines


def _finding(
    a: Assessment, severity: Severity, rule: str, title: str, message: str, **extra: Any
) -> Finding:
    head = a.claim.head
    base = a.claim.base
    data: dict[str, Any] = {
        "base": base.version if base else None,
        "head": head.version if head else None,
        "develop": a.develop.version if a.develop else None,
        "suggested": a.verdict.suggested,
        **extra,
    }
    return Finding(
        check=NAME,
        severity=severity,
        title=f"{a.chart.name}: {title}",
        message=message,
        rule=str(rule),
        chart=a.chart.path,
        subject="Chart.yaml",
        path=head.file if head else None,
        line=head.version_line if head else None,
        data=data,
    )


def _verdict_finding(ctx: ChartContext, a: Assessment) -> Finding | None:
    v, claim = a.verdict, a.claim
    assert claim.head is not None
    base = claim.base.version if claim.base else None
    head = claim.head.version
    take = f"Take {v.suggested}." if v.suggested else ""
    if v.status is Status.MISSING_BUMP:
        shown = ", ".join(claim.content[:LISTED_FILES])
        more = len(claim.content) - LISTED_FILES
        files = shown + (f" and {more} more" if more > 0 else "")
        return _finding(
            a,
            Severity.FAILURE,
            v.status,
            "chart content changed without a version bump",
            f"This PR changes {files} but `version` stays {head}. A Helm repository only "
            f"publishes new versions, so this content would reach nobody. {take}",
        )
    if v.status is Status.INVALID:
        why = claim.head.error or (
            f"`version: {head}` is not a valid SemVer 2 version"
            if head is not None
            else f"`{claim.head.file}` has no `version`"
        )
        return _finding(
            a,
            Severity.FAILURE,
            v.status,
            "chart version is not valid SemVer",
            f"{why}; Helm requires MAJOR.MINOR.PATCH. {take}",
        )
    if v.status is Status.NOT_GREATER:
        return _finding(
            a,
            Severity.FAILURE,
            v.status,
            "chart version does not increase",
            f"`version` {head} is not greater than {base} at the merge base. {take}",
        )
    if v.status is Status.TAKEN:
        return _taken_finding(ctx, a, take)
    if v.status is Status.RACE:
        names = ", ".join(pr_label(pr) for pr in v.rivals)
        return _finding(
            a,
            Severity.WARNING,
            v.status,
            f"version {head} is also claimed by {names}",
            f"{names} also bumps this chart to {head}; whichever merges first takes it, "
            f"and the other will need {v.suggested}.",
            other_pr=v.rivals[0].number,
            other_prs=[pr.number for pr in v.rivals],
            other_refs=[pr.ref for pr in v.rivals],
        )
    return None


def _taken_finding(ctx: ChartContext, a: Assessment, take: str) -> Finding:
    claim, v = a.claim, a.verdict
    assert claim.head is not None and claim.head.version is not None
    head = claim.head.version
    develop_version = v.develop_version or ""
    case = merge_case(ctx.git, a.develop_sha, claim.head_sha, a.chart.path)
    origin = version_origin(ctx.git, a.develop_sha, a.chart.path, develop_version)
    since = ""
    if origin is not None:
        short = origin.commit.sha[:7]
        since = (
            f" since #{origin.pr} ({short})"
            if origin.pr
            else f" since {short} ({origin.commit.subject})"
        )
    name = claim.head.name or a.chart.name
    released = released_tag(ctx.git.tags(), name, head)
    released_text = f" {head} is already released (tag `{released}`)." if released else ""
    step = f"{claim.base.version} → {head} bump" if claim.base else f"new chart at {head}"
    message = (
        f"{a.develop_label} is at {develop_version}{since}, so this PR's {step} "
        f"is taken: {CASE_TEXT[case]}.{released_text} {take}"
    )
    return _finding(
        a,
        Severity.FAILURE,
        v.status,
        f"{a.develop_label} is at {develop_version}; take {v.suggested}",
        message,
        case=case,
        released=released,
        since=origin.commit.sha if origin else None,
        since_pr=origin.pr if origin else None,
    )


def _notices(a: Assessment) -> list[Finding]:
    """Things that are not the PR's doing but limit what the check could compare."""
    found = []
    develop = a.develop
    if (
        develop is not None
        and develop.version is not None
        and parse_version(develop.version) is None
    ):
        found.append(
            _finding(
                a,
                Severity.NOTICE,
                "develop-invalid",
                f"{a.develop_label}'s version is not valid SemVer",
                f"{a.develop_label}'s `Chart.yaml` has `version: {develop.version}`, "
                "not SemVer 2, so this PR's version was not compared with it.",
            )
        )
    base = a.claim.base
    if a.claim.version_unchanged and base is not None and parse_version(base.version) is None:
        found.append(
            _finding(
                a,
                Severity.NOTICE,
                "base-invalid",
                "chart version is not valid SemVer",
                f"`version: {base.version}` was already not SemVer 2 before this PR.",
            )
        )
    return found


def _app_version_finding(a: Assessment) -> Finding | None:
    """Rule 5: where the base keeps appVersion equal to version, head should too."""
    base, head = a.claim.base, a.claim.head
    if base is None or head is None or base.version is None or base.app_version != base.version:
        return None
    if head.app_version == head.version:
        return None
    return _finding(
        a,
        Severity.WARNING,
        "app-version",
        "appVersion no longer equals version",
        f"This chart keeps `appVersion` equal to `version` ({base.version} at the merge "
        f"base), but head has `version: {head.version}` and "
        f"`appVersion: {head.app_version}`.",
        app_version=head.app_version,
    )


CHECK = Check(NAME, "Chart versions", run, "chart", explain=explain)
