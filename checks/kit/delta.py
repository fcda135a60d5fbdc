"""What a PR changes: the issues a check finds in each profile's render at base and at head, compared
and turned into findings.

An issue is identified by (rule, subject, container, detail), never by its line or wording, so that a
template reformatted around it is still the same issue. Only at head: the rule's severity. At base
and head alike: not the PR's doing, one notice. Gone at head: nothing (fixing is quiet). Either way
one finding covers every profile with the same issue and wording, rather than one per profile."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.model.report import Finding, Origin, Severity

PREEXISTING = " Already so at base, so not this PR's doing."
TITLE_PREEXISTING = "{title} on {profiles} (already at base)"
TITLE_NEW = "{title} on {profiles}"
MESSAGE = "{label} {profiles}: {message}"


@dataclass(frozen=True)
class Issue:
    """One defect in one profile's render. `title` and `message` do not name the profile.

    `locate`, when given, finds the line instead of `line`: only for the issues that become findings,
    since reading a template to find a line costs more than finding the issue (every profile and side
    has its issues, and one finding covers them all)."""

    rule: str
    subject: str  # Kind/namespace/name
    container: str | None
    detail: str
    title: str
    message: str
    path: str | None = None
    line: int | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    locate: Callable[[], int | None] | None = field(default=None, compare=False, repr=False)
    # The rendered field the issue is about, from the pod spec (`("containers", 0,
    # "livenessProbe", "httpGet", "port")`): where its value came from is read from it.
    field: tuple[str | int, ...] = field(default=(), compare=False)

    @property
    def where(self) -> int | None:
        """The line the finding points at."""
        return self.line if self.locate is None else self.locate()

    @property
    def identity(self) -> tuple[str, str, str, str]:
        return (self.rule, self.subject, self.container or "", self.detail)


# profile -> its issues; None (or a missing profile) when that side has no render to compare with
Issues = Mapping[str, Sequence[Issue] | None]


def compare(
    check: str, chart: str, base: Issues, head: Issues, severity: Mapping[str, Severity]
) -> list[Finding]:
    """Findings for the issues at head: new ones at their rule's severity, old ones as notices."""
    groups: dict[tuple[bool, tuple[str, str, str, str], str], dict[str, Issue]] = {}
    for profile in sorted(head):
        known = {issue.identity for issue in base.get(profile) or ()}
        for issue in head[profile] or ():
            key = (issue.identity in known, issue.identity, issue.message)
            groups.setdefault(key, {}).setdefault(profile, issue)
    return [
        _finding(check, chart, severity[identity[0]], preexisting, by_profile)
        for (preexisting, identity, _), by_profile in groups.items()
    ]


def changes_only(
    check: str, chart: str, head: Issues, severity: Mapping[str, Severity]
) -> list[Finding]:
    """Findings for issues that already describe a change between base and head (nothing to subtract)."""
    return compare(check, chart, {}, head, severity)


def _finding(
    check: str,
    chart: str,
    severity: Severity,
    preexisting: bool,
    by_profile: Mapping[str, Issue],
) -> Finding:
    profiles = ", ".join(by_profile)
    issue = next(iter(by_profile.values()))
    label = "profile" if len(by_profile) == 1 else "profiles"
    message = MESSAGE.format(label=label, profiles=profiles, message=issue.message)
    title = (TITLE_PREEXISTING if preexisting else TITLE_NEW).format(
        title=issue.title, profiles=profiles
    )
    line = issue.where
    origin = (
        Origin(issue.path, line, issue.subject, issue.field) if issue.path and issue.field else None
    )
    return Finding(
        check=check,
        severity=Severity.NOTICE if preexisting else severity,
        title=title,
        message=message + (PREEXISTING if preexisting else ""),
        rule=issue.rule,
        chart=chart,
        profile=profiles,
        subject=issue.subject,
        path=issue.path,
        line=line,
        origin=origin,
        data={
            "container": issue.container,
            "detail": issue.detail,
            "profiles": list(by_profile),
            **issue.data,
        },
        preexisting=preexisting,
    )


def compare_files(
    check: str,
    chart: str,
    base: Sequence[Issue],
    head: Sequence[Issue],
    severity: Mapping[str, Severity],
) -> list[Finding]:
    """`compare` for issues of files rather than of renders (a lint of the chart's own files): no
    profiles, one finding per issue at head, in its order."""
    known = {issue.identity for issue in base}
    found: dict[tuple[str, str, str, str], Finding] = {}
    for issue in head:
        preexisting = issue.identity in known
        found.setdefault(
            issue.identity,
            Finding(
                check=check,
                severity=Severity.NOTICE if preexisting else severity[issue.rule],
                title=issue.title + (" (already at base)" if preexisting else ""),
                message=issue.message + (PREEXISTING if preexisting else ""),
                rule=issue.rule,
                chart=chart,
                subject=issue.subject,
                path=issue.path,
                line=issue.where,
                data={"detail": issue.detail, **issue.data},
                preexisting=preexisting,
            ),
        )
    return list(found.values())
