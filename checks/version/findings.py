"""The `version` check's findings: the verdict, with the git facts a release manager needs to act
and, for a verdict that depends on it, the repository's practice that sets its severity."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.model.context import ChartContext
from bot.model.report import Finding, Severity
from bot.versions.app_version import AppVersionHabit, app_version_habit
from bot.versions.claims import (
    Origin,
    Status,
    merge_case,
    pr_label,
    released_tag,
    version_origin,
)
from bot.versions.semver import parse_version

if TYPE_CHECKING:
    from checks.version.assessment import Assessment

NAME = "version"
# How many changed content files a missing-bump message lists before "and N more".
LISTED_FILES = 3

CASE_TEXT = {
    "conflict": "`Chart.yaml` will conflict on merge",
    "clean": (
        "it merges *cleanly* because {branch} made the identical bump, so nothing fails and this "
        "PR's content would ship under a version that already names other content"
    ),
}


def finding(
    a: Assessment, severity: Severity, rule: str, title: str, message: str, **extra: Any
) -> Finding:
    head = a.claim.head
    base = a.claim.base
    data: dict[str, Any] = {
        "base": base.version if base else None,
        "head": head.version if head else None,
        "develop": a.develop.version if a.develop else None,
        "suggested": a.verdict.suggested,
        **({"practice": a.practice.to_json()} if a.practice is not None else {}),
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


def _by_practice(
    a: Assessment, enforced: Severity, expected: Severity = Severity.WARNING
) -> tuple[Severity, str]:
    """The severity of a verdict that only matters where the repository bumps per change (by the
    rule's level: `enforced`, `expected`, else a notice), and the sentence that says why."""
    rule = a.practice
    if rule is None:
        return enforced, ""
    severity = (Severity.NOTICE, expected, enforced)[rule.level]
    return severity, f" {rule.sentence()}"


def verdict_finding(ctx: ChartContext, a: Assessment) -> Finding | None:
    v, claim = a.verdict, a.claim
    assert claim.head is not None
    base = claim.base.version if claim.base else None
    head = claim.head.version
    take = f"Take {v.suggested}." if v.suggested else ""
    if v.status is Status.MISSING_BUMP:
        return _missing_bump(a)
    if v.status is Status.INVALID:
        why = claim.head.error or (
            f"`version: {head}` is not a version Helm can read"
            if head is not None
            else f"`{claim.head.file}` has no `version`"
        )
        return finding(
            a,
            Severity.FAILURE,
            v.status,
            "chart version is not valid SemVer",
            f"{why}; Helm refuses to load the chart without a SemVer version "
            f"(MAJOR.MINOR.PATCH, an optional `-pre-release` and `+build`). {take}",
        )
    if v.status is Status.NOT_GREATER:
        return finding(
            a,
            Severity.FAILURE,
            v.status,
            "chart version does not increase",
            f"`version` {head} is not greater than {base} at the merge base. {take}",
        )
    if v.status is Status.TAKEN:
        if not ctx.git.merge_changes(a.develop_sha, claim.head_sha, a.chart.path):
            return _landed(ctx, a)
        return _taken(ctx, a, take)
    if v.status is Status.RACE:
        return _race(a)
    return None


def _missing_bump(a: Assessment) -> Finding:
    v, claim = a.verdict, a.claim
    assert claim.head is not None
    shown = ", ".join(claim.content[:LISTED_FILES])
    more = len(claim.content) - LISTED_FILES
    files = shown + (f" and {more} more" if more > 0 else "")
    severity, practice = _by_practice(a, Severity.FAILURE)
    if severity is Severity.FAILURE:
        why = (
            "A Helm repository only publishes new versions, so this content would reach nobody."
            f"{practice} Take {v.suggested}."
        )
        title = "chart content changed without a version bump"
    elif severity is Severity.WARNING:
        why = (
            "A Helm repository only publishes new versions, so this content would wait for the "
            f"next bump.{practice} Take {v.suggested}."
        )
        title = "chart content changed without a version bump"
    else:
        why = f"{practice.strip()} If this change is to be released on its own, take {v.suggested}."
        title = "chart content changed without a version bump (not enforced here)"
    return finding(
        a,
        severity,
        v.status,
        title,
        f"This PR changes {files} but `version` stays {claim.head.version}. {why}",
    )


def _landed(ctx: ChartContext, a: Assessment) -> Finding:
    """develop already has every change this PR makes to the chart (the same change landed by
    another PR or commit): merging it changes nothing there, so its version takes nothing."""
    claim, v = a.claim, a.verdict
    assert claim.head is not None
    develop_version = v.develop_version or ""
    origin = version_origin(ctx.git, a.develop_sha, a.chart.path, develop_version)
    since = _since(origin)
    return finding(
        a,
        Severity.NOTICE,
        "already-on-develop",
        f"{a.develop_label} already has this change",
        f"{a.develop_label} is at {develop_version}{since} and already has every change this PR "
        f"makes to {a.chart.path}: merging it changes nothing there, so its "
        f"{claim.head.version} names no other content. If nothing else of it is wanted, it can be "
        "closed.",
    )


def _since(origin: Origin | None) -> str:
    if origin is None:
        return ""
    short = origin.commit.sha[:7]
    return (
        f" since #{origin.pr} ({short})"
        if origin.pr
        else f" since {short} ({origin.commit.subject})"
    )


def _taken(ctx: ChartContext, a: Assessment, take: str) -> Finding:
    claim, v = a.claim, a.verdict
    assert claim.head is not None and claim.head.version is not None
    head = claim.head.version
    develop_version = v.develop_version or ""
    case = merge_case(ctx.git, a.develop_sha, claim.head_sha, a.chart.path)
    origin = version_origin(ctx.git, a.develop_sha, a.chart.path, develop_version)
    since = _since(origin)
    name = claim.head.name or a.chart.name
    released = released_tag(ctx.git, name, head)
    released_text = f" {head} is already released (tag `{released}`)." if released else ""
    step = f"{claim.base.version} → {head} bump" if claim.base else f"new chart at {head}"
    # Where versions move at release, the release picks the next version whatever this PR wrote.
    severity, practice = _by_practice(a, Severity.FAILURE)
    message = (
        f"{a.develop_label} is at {develop_version}{since}, so this PR's {step} "
        f"is taken: {CASE_TEXT[case].format(branch=a.develop_label)}.{released_text}{practice} {take}"
    )
    return finding(
        a,
        severity,
        v.status,
        f"{a.develop_label} is at {develop_version}; take {v.suggested}",
        message,
        case=case,
        released=released,
        since=origin.commit.sha if origin else None,
        since_pr=origin.pr if origin else None,
    )


def _race(a: Assessment) -> Finding:
    v, head = a.verdict, a.claim.head
    assert head is not None
    names = ", ".join(pr_label(pr) for pr in v.rivals)
    severity, practice = _by_practice(a, Severity.WARNING)
    return finding(
        a,
        severity,
        v.status,
        f"version {head.version} is also claimed by {names}",
        f"{names} also bumps this chart to {head.version}; whichever merges first takes it, "
        f"and the other will need {v.suggested}.{practice}",
        other_pr=v.rivals[0].number,
        other_prs=[pr.number for pr in v.rivals],
        other_refs=[pr.ref for pr in v.rivals],
    )


def notices(a: Assessment) -> list[Finding]:
    """Things that are not the PR's doing but limit what the check could compare."""
    found = []
    develop = a.develop
    if (
        develop is not None
        and develop.version is not None
        and parse_version(develop.version) is None
    ):
        found.append(
            finding(
                a,
                Severity.NOTICE,
                "develop-invalid",
                f"{a.develop_label}'s version is not valid SemVer",
                f"{a.develop_label}'s `Chart.yaml` has `version: {develop.version}`, "
                "which Helm cannot read, so this PR's version was not compared with it.",
            )
        )
    base = a.claim.base
    if a.claim.version_unchanged and base is not None and parse_version(base.version) is None:
        found.append(
            finding(
                a,
                Severity.NOTICE,
                "base-invalid",
                "chart version is not valid SemVer",
                f"`version: {base.version}` was already not a version Helm can read before "
                "this PR.",
            )
        )
    return found


def app_habit(ctx: ChartContext) -> AppVersionHabit:
    """Whether the chart keeps appVersion equal to version, from the integration branch (which the
    PR cannot change)."""
    tip = ctx.develop if ctx.develop is not None else ctx.target
    return app_version_habit(ctx.git, tip, ctx.chart.path)


def app_version_finding(ctx: ChartContext, a: Assessment) -> Finding | None:
    """Rule 5: where the chart keeps appVersion equal to version, head should too. The base's
    pair alone does not say it does: a warning where the chart's recent versions all did, a notice
    where too few tell, nothing where one of them did not."""
    base, head = a.claim.base, a.claim.head
    if base is None or head is None or base.version is None or base.app_version != base.version:
        return None
    if head.app_version == head.version:
        return None
    habit = app_habit(ctx)
    if habit.keeps_equal is False:
        return None
    if habit.keeps_equal:
        severity, why = Severity.WARNING, habit.figure(a.develop_label)
    else:
        severity = Severity.NOTICE
        why = (
            f"{base.version} at the merge base; {a.develop_label} has too few versions of it to "
            "tell whether that is its rule"
        )
    return finding(
        a,
        severity,
        "app-version",
        "appVersion no longer equals version",
        f"This chart keeps `appVersion` equal to `version` ({why}), but head has "
        f"`version: {head.version}` and `appVersion: {head.app_version}`.",
        app_version=head.app_version,
        app_versions_equal={"versions": habit.versions, "equal": habit.equal},
    )
