"""The `render` check: a chart that does not render on a profile at head where the base did is a
failure naming Helm's file and line; one that failed at base too is not the PR's doing (a notice),
and one the PR fixed is a notice. A chart nothing could be checked on at head (it renders on no
profile, or it is a library chart, which renders nothing itself: the finding names the charts that
depend on it) is said first, as `not-reviewed`, a warning: never a silent pass."""

from __future__ import annotations

import re
from dataclasses import replace

from bot.model.chart_files import CI_VALUES_SUFFIX, DEFAULT_PROFILE, find_charts, read_chart_meta
from bot.model.check import Check
from bot.model.context import ChartContext, ChartRenders, RenderError
from bot.model.report import NOT_REVIEWED, Finding, Severity

NAME = "render"
# Addresses and temp paths differ between two renders of the same broken template.
_VOLATILE_RE = re.compile(r"/tmp/[^\s:)]+|0x[0-9a-f]+")
PREEXISTING_RULES = frozenset({"fails-both"})


def _same(a: RenderError, b: RenderError) -> bool:
    return _VOLATILE_RE.sub("", a.message) == _VOLATILE_RE.sub("", b.message)


def _where(err: RenderError) -> str:
    if err.template and err.line:
        return f"{err.template} line {err.line}"
    return err.template or "the chart"


def run(ctx: ChartContext) -> list[Finding]:
    found = render_findings(ctx.chart)
    unreviewed = not_reviewed(ctx)
    return [unreviewed, *found] if unreviewed is not None else found


def not_reviewed(ctx: ChartContext) -> Finding | None:
    """A chart nothing could be checked on at head is said first, as a warning: its other checks
    found nothing because they had nothing to look at, which must never read as a pass."""
    r = ctx.chart
    if not r.head:
        return None  # removed by the PR (or no profile asked for): nothing to review there
    meta = read_chart_meta(ctx.head, r.path)
    if meta is not None and meta.chart_type == "library":
        users = _dependents(ctx, meta.name or r.path.rsplit("/", 1)[-1])
        short = "it is a library chart, which renders nothing itself"
        detail = f"; the charts that depend on it here: {', '.join(users)}" if users else ""
    elif all(rendered.error is not None for rendered in r.head.values()):
        first = next(iter(sorted(r.head.items())))[1].error
        assert first is not None
        if first.unavailable:
            # What the review could not have (a dependency it could not fetch), in Helm's terms.
            short, detail = first.message, f" ({_where(first)})"
        else:
            short = "it renders on no profile at head"
            detail = f" ({_where(first)}: {first.message}){_unused_ci_values(ctx)}"
    else:
        return None
    why = short + detail
    return Finding(
        check=NAME,
        severity=Severity.WARNING,
        rule=NOT_REVIEWED,
        chart=r.path,
        title=f"{r.path}: not reviewed: {short}",
        message=f"{r.path} was not reviewed: {why}. No other check could look at it, so their "
        "silence says nothing about this chart.",
        data={"why": why},
    )


def _unused_ci_values(ctx: ChartContext) -> str:
    """Where only the chart's defaults were rendered while its ci/ holds values files that are no
    profile (aws/eks-charts keeps `ci/values.yaml`): how to make them one."""
    if set(ctx.chart.head) != {DEFAULT_PROFILE}:
        return ""
    ci = f"{ctx.chart.path}/ci/" if ctx.chart.path not in ("", ".") else "ci/"
    unused = [
        p
        for p in ctx.head.paths(ci.rstrip("/"))
        if "/" not in p[len(ci) :] and p.endswith((".yaml", ".yml"))
    ]
    if not unused:
        return ""
    names = ", ".join(f"`{p[len(ci) :]}`" for p in unused[:3])
    return (
        f"; its ci/ holds {names}, which chart-testing does not render: only `ci/*"
        f"{CI_VALUES_SUFFIX}` files are profiles (rename one `ci/NAME{CI_VALUES_SUFFIX}`, or "
        "name it in `profiles:` of .github/chart-review.yml)"
    )


def _dependents(ctx: ChartContext, library: str) -> list[str]:
    users = []
    for path in find_charts(ctx.head):
        meta = read_chart_meta(ctx.head, path)
        if path != ctx.chart.path and meta is not None and library in meta.dependencies:
            users.append(path)
    return users


def render_findings(r: ChartRenders) -> list[Finding]:
    refused = r.refused.get("head")
    if refused is not None:
        if r.refused.get("base") == refused:
            return [
                _finding(
                    r.path,
                    None,
                    Severity.NOTICE,
                    "unsafe-tree",
                    f"{r.path}: chart tree refused at base and head",
                    f"{refused} (already so at base, not this PR's doing).",
                    None,
                )
            ]
        return [
            _finding(
                r.path,
                None,
                Severity.FAILURE,
                "unsafe-tree",
                f"{r.path}: chart tree refused at head",
                f"{refused}. The chart was not rendered.",
                None,
            )
        ]
    out: list[Finding] = []
    for profile in sorted(set(r.base) | set(r.head)):
        finding = _profile_finding(r, profile)
        if finding is not None:
            out.append(finding)
    return merge_profiles(out) + _unvalidated(r)


def _unvalidated(r: ChartRenders) -> list[Finding]:
    """Schemas left out of the render because they reach outside the chart: the values were not
    validated against them. New at head, a warning; as at base, a notice."""
    base = r.unvalidated.get("base", {})
    out = []
    for path, why in sorted(r.unvalidated.get("head", {}).items()):
        already = base.get(path) == why
        out.append(
            Finding(
                check=NAME,
                severity=Severity.NOTICE if already else Severity.WARNING,
                rule="schema-not-validated",
                chart=r.path,
                title=f"{path} reaches outside the chart: values not validated against it",
                message=f"{path}: {why}. The schema was left out of the render, so the values of "
                "every profile went unvalidated; Helm itself would read that file or address "
                "when installing. Keep references inside the schema (`#/definitions/...`)"
                + (" (already so at base, not this PR's doing)." if already else "."),
                path=path,
                preexisting=already,
            )
        )
    return out


def _profile_finding(r: ChartRenders, profile: str) -> Finding | None:
    base = r.base[profile].error if profile in r.base else None
    head = r.head[profile].error if profile in r.head else None
    if head is not None and base is None and profile not in r.base:
        like = _as_at_base(r, head)
        if like is not None:
            return _finding(
                r.path,
                profile,
                Severity.NOTICE,
                "fails-both",
                f"{r.path} fails to render on profile {profile}, as at base",
                f"profile {profile} (a profile this PR adds) fails as profile {like} already did "
                f"at base, so not this PR's doing: {_where(head)}: {head.message}",
                head,
            )
    if head is not None and head.unavailable and (base is None or base.unavailable):
        return _unavailable(r, profile, head, base)
    if head is not None and base is None:
        why = "where the base rendered" if profile in r.base else "(a profile this PR adds)"
        return _finding(
            r.path,
            profile,
            Severity.FAILURE,
            "head-fails",
            f"{r.path} fails to render on profile {profile}",
            f"profile {profile}: the head fails to render {why}: {_where(head)}: {head.message}",
            head,
        )
    if head is not None and base is not None:
        if _same(base, head):
            return _finding(
                r.path,
                profile,
                Severity.NOTICE,
                "fails-both",
                f"{r.path} fails to render on profile {profile}, at base too",
                f"profile {profile}: fails at base and head alike, so not this PR's doing: "
                f"{_where(head)}: {head.message}",
                head,
            )
        return _finding(
            r.path,
            profile,
            Severity.WARNING,
            "fails-differently",
            f"{r.path} still fails to render on profile {profile}, differently",
            f"profile {profile}: the base failed with `{base.message}`; the head fails with "
            f"{_where(head)}: {head.message}",
            head,
        )
    if base is not None and profile in r.head:
        return _finding(
            r.path,
            profile,
            Severity.NOTICE,
            "fixed",
            f"{r.path} renders again on profile {profile}",
            f"profile {profile}: the base failed to render ({_where(base)}: {base.message}); "
            "the head fixes it.",
            None,
        )
    return None


def _unavailable(
    r: ChartRenders, profile: str, head: RenderError, base: RenderError | None
) -> Finding:
    """A dependency the review could not have (not committed, and not fetched: offline, refused,
    unreachable): the chart could not be looked at on this profile, which is no defect of the PR's
    templates. New at head, a warning that says so; as at base, a notice (and the chart as a whole
    is still "not reviewed", a warning, whenever no profile rendered at head)."""
    if base is not None:
        return _finding(
            r.path,
            profile,
            Severity.NOTICE,
            "fails-both",
            f"{r.path} not rendered on profile {profile}, at base too: a dependency is unavailable",
            f"profile {profile}: not rendered at base or head, so not this PR's doing: "
            f"{_where(head)}: {head.message}",
            head,
        )
    return _finding(
        r.path,
        profile,
        Severity.WARNING,
        "dependency-unavailable",
        f"{r.path} not rendered on profile {profile}: a dependency is unavailable",
        f"profile {profile}: the head could not be rendered, so nothing on it was checked: "
        f"{_where(head)}: {head.message}. This says nothing about the chart's templates: the "
        "review could not get the dependency to render them with.",
        head,
    )


def _as_at_base(r: ChartRenders, head: RenderError) -> str | None:
    """The base profile that failed exactly as `head` does (a dependency missing from the chart,
    a broken helper), if any: a profile the PR adds cannot be blamed for what fails everywhere."""
    for name, rendered in sorted(r.base.items()):
        if rendered.error is not None and _same(rendered.error, head):
            return name
    return None


def merge_profiles(findings: list[Finding]) -> list[Finding]:
    """The same failure on several profiles is one finding that names them all."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        key = (f.rule, f.severity, f.path, f.line, f.message.split(": ", 1)[-1])
        groups.setdefault(key, []).append(f)
    out = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            out.append(first)
            continue
        names = [f.profile or "" for f in group]
        listed = ", ".join(names)
        out.append(
            replace(
                first,
                profile=None,
                subject=listed,
                title=first.title.replace(f"profile {first.profile}", f"profiles {listed}"),
                message=first.message.replace(
                    f"profile {first.profile}:", f"profiles {listed}:", 1
                ),
                data={**first.data, "profiles": names},
            )
        )
    return out


def _finding(
    chart: str,
    profile: str | None,
    severity: Severity,
    rule: str,
    title: str,
    message: str,
    err: RenderError | None,
) -> Finding:
    return Finding(
        check=NAME,
        severity=severity,
        rule=rule,
        chart=chart,
        profile=profile,
        subject=profile,
        title=title,
        message=message,
        path=err.template if err is not None else None,
        line=err.line if err is not None else None,
        # A failure the base has too is not the PR's: marked so the report can fold it.
        preexisting=rule in PREEXISTING_RULES,
    )


CHECK = Check(NAME, "Rendering", run, "chart", quiet=True)
