"""The `kube` check: every rendered object as the Kubernetes API server of the target version would
take it, checked offline, as kubeconform and pluto do in CI: against the API's own schemas of that
version (checks/kube/schemas.py), a custom resource against the CRD the chart brings
(checks/kube/crds.py), and its apiVersion against the deprecation table
(checks/kube/deprecations.py).

The target is the Kubernetes version the charts were rendered for (`--kube-version`, the config's
`kube_version`, else Helm's own default; `charts[].capabilities` in the JSON report). Built-in
kinds are checked against the API's OpenAPI schemas in their strict form, as the
`kubernetes-validate` package ships them for v1.25–v1.37 (read when the check first runs, ~10 ms);
a custom resource against the `openAPIV3Schema` of the CRD the chart renders or carries in `crds/`,
read as the API server reads a structural schema (unknown fields pruned,
`x-kubernetes-preserve-unknown-fields`, `-int-or-string` and `-embedded-resource` honoured;
patterns, formats, CEL rules and `allOf`/`anyOf`/`oneOf`/`not` are not checked, since the schema
and the object are both the PR's and those can take exponential time); every apiVersion against a
table of Kubernetes' deprecation guide (`checks/kube/deprecated_apis.yaml`).

A field the API server drops or, validating strictly as kubectl does, refuses (`unknown-field`), a
value it refuses (a string `replicas`, a missing required field, a value outside an enum:
`rejected-field`), an apiVersion it no longer serves (`removed-api`, naming the replacement or that
there is none, as for PodSecurityPolicy) or a kind it does not serve (`unknown-api`, a typo or a
version the chart's CRD does not serve) is a failure when the PR brings it; a deprecated apiVersion
still served a warning (`deprecated-api`; `v1` Endpoints, deprecated with no removal scheduled, a
notice, `deprecated-api-kept`). Where the template picks the old apiVersion only for want of the
new one in `.Capabilities.APIVersions` (Helm's own defaults lack `apiregistration.k8s.io/v1`, which
every cluster of 1.25 serves), the cluster gets the new one: a notice
(`api-version-from-capabilities`) saying to add it to `api_versions`. Each finding names the
profiles, the object, the field (`spec.template.spec.containers[web].ports`) and its template line;
what the base renders too is folded, and a null is never at fault (Kubernetes reads it as unset).

A target without installed schemas (before 1.25, after 1.37) is a notice saying the objects were
not checked, never a silent pass; the deprecation table still applies. Each kind's schema is
compiled once per version, and an object (or a part of it) that several renders share is checked
once; at most 10 findings an object, the rest one line (`MAX_FAULTS_PER_OBJECT`); a `crds/` file
past 5 MiB is not read."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from bot.git.objects import Tree
from bot.lru import IdentitiesMemo
from bot.model.check import Check
from bot.model.context import ChartContext, Rendered
from bot.model.manifests import Document
from bot.model.report import Finding, Severity
from checks.kit.delta import Issue, compare
from checks.kube.compiled import Checker
from checks.kube.crds import Crds, chart_crds
from checks.kube.deprecations import deprecation
from checks.kube.fields import MAX_FAULTS_PER_OBJECT, REJECTED, UNKNOWN, Fault, faults
from checks.kube.lines import field_line
from checks.kube.schemas import ApiSchemas, api_schemas, shipped
from checks.kube.versions import Minor, minor, shown

NAME = "kube"
REMOVED, DEPRECATED, UNSERVED = "removed-api", "deprecated-api", "unknown-api"
NOT_VALIDATED = "not-validated"
SEVERITY = {
    UNKNOWN: Severity.FAILURE,
    REJECTED: Severity.FAILURE,
    REMOVED: Severity.FAILURE,
    UNSERVED: Severity.FAILURE,
    DEPRECATED: Severity.WARNING,
}
# A deprecation with no removal scheduled (v1 Endpoints) is worth knowing, nothing more.
SOFT_DEPRECATED = "deprecated-api-kept"
SEVERITY[SOFT_DEPRECATED] = Severity.NOTICE
# A template that picks the old apiVersion only where the render lacks the new one (Helm's own
# defaults lack some groups a cluster serves, apiregistration.k8s.io among them): the cluster of
# the target version gets the new one, so this is said for the review's render, as a notice.
ASKED = "api-version-from-capabilities"
SEVERITY[ASKED] = Severity.NOTICE
_CAPABILITIES = "APIVersions"
# `kind: List` is a client-side wrapper (kubectl and Helm send its items), no API kind.
CLIENT_SIDE_KINDS = frozenset({"List"})
_FAULTS: IdentitiesMemo[tuple[Fault, ...]] = IdentitiesMemo(8192)

CONSEQUENCE = {
    UNKNOWN: (
        "the API server drops it (with a warning), or refuses the object where fields are "
        "validated strictly, as kubectl does by default: what it sets never takes effect"
    ),
    REJECTED: "the API server refuses the object",
}


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    if not chart.head or "head" in chart.refused:
        return []
    target = _target(ctx.kube_version)
    if target is None:
        return [_not_validated(ctx)]
    schemas = api_schemas(target)
    base = {p: _issues(ctx.base, chart.path, r, target, schemas) for p, r in chart.base.items()}
    head = {p: _issues(ctx.head, chart.path, r, target, schemas) for p, r in chart.head.items()}
    found = compare(NAME, chart.path, base, head, SEVERITY)
    return found if schemas is not None else [_not_validated(ctx), *found]


def _target(kube_version: str | None) -> Minor | None:
    try:
        return minor(kube_version) if kube_version else None
    except ValueError:
        return None


def _issues(
    tree: Tree, chart: str, rendered: Rendered, target: Minor, schemas: ApiSchemas | None
) -> list[Issue] | None:
    if rendered.error is not None:
        return None
    crds = chart_crds(tree, chart, rendered.documents) if schemas is not None else ({}, {})
    issues: list[Issue] = []
    for doc in rendered.documents:
        if doc.kind in CLIENT_SIDE_KINDS or not isinstance(doc.body.get("apiVersion"), str):
            continue
        api = doc.body["apiVersion"]
        retired = _deprecated(tree, doc, api, target)
        if retired is not None:
            issues.append(retired)
            if retired.data["removed"]:
                continue  # no schema to check it against: the removal is what to fix
        if schemas is not None:
            issues += _validated(tree, doc, api, target, schemas, crds)
    return issues


def _deprecated(tree: Tree, doc: Document, api: str, target: Minor) -> Issue | None:
    found = deprecation(api, doc.kind)
    if found is None or found.deprecated > target:
        return None
    replacement = found.replacement(target)
    use = f"{replacement.api} {replacement.kind or doc.kind}" if replacement else None
    gone = shown(found.removed) if found.removed is not None else None
    removed = found.removed is not None and found.removed <= target
    asked = replacement is not None and _asks_for(
        tree.text(doc.template), replacement.api, doc.kind
    )
    rule = _retirement(asked, removed, gone is not None)
    fmt = {"api": api, "kind": doc.kind, "version": shown(target), "use": use, "gone": gone}
    fmt |= {"since": shown(found.deprecated), "advice": found.advice(target)}
    fmt |= {"served": "no longer serves" if removed else "deprecates"}
    fmt["asked"] = replacement.api if replacement is not None else None
    return Issue(
        rule=rule,
        subject=doc.key,
        container=None,
        detail=f"{api} {doc.kind}",
        title=f"{doc.key}: {api} {doc.kind} {'removed' if removed else 'deprecated'}",
        message=f"{doc.key}: {_RETIRED[rule].format(**fmt)}.",
        path=doc.template,
        data={
            "api_version": api,
            "kind": doc.kind,
            "kube_version": shown(target),
            "deprecated_in": fmt["since"],
            "removed_in": gone,
            "removed": removed,  # at the target version
            "replacement": use,
        },
        locate=partial(_line, tree, doc, ("apiVersion",)),
    )


def _retirement(asked: bool, removed: bool, removal_scheduled: bool) -> str:
    if asked:
        return ASKED
    if removed:
        return REMOVED
    return DEPRECATED if removal_scheduled else SOFT_DEPRECATED


_RETIRED = {
    ASKED: (
        "rendered as {api} {kind}, which Kubernetes {version} {served}, because the template picks "
        "it where `.Capabilities.APIVersions` lacks {asked}, as the render's did; a cluster of "
        "{version} serves {use}, and the chart renders that there. Add {asked} to `api_versions` "
        "(or `--api-versions`) to review what it gets"
    ),
    REMOVED: (
        "{api} {kind} is not served by Kubernetes {version}: deprecated in {since}, removed in "
        "{gone}, so the API server refuses it; {advice}"
    ),
    DEPRECATED: "{api} {kind} is deprecated since Kubernetes {since}, and removed in {gone}: {advice}",
    SOFT_DEPRECATED: "{api} {kind} is deprecated since Kubernetes {since}: {advice}",
}


def _asks_for(source: str | None, api: str, kind: str) -> bool:
    """Whether the template chooses its apiVersion by asking Helm for `api` (`.Capabilities.
    APIVersions.Has "policy/v1"`, or `"policy/v1/PodDisruptionBudget"`): then what it rendered
    follows the render's API versions, not the cluster's."""
    if not source or _CAPABILITIES not in source:
        return False
    return re.search(rf"[\"']{re.escape(api)}(?:/{re.escape(kind)})?[\"']", source) is not None


def _validated(
    tree: Tree, doc: Document, api: str, target: Minor, schemas: ApiSchemas, crds: Crds
) -> list[Issue]:
    group, _, version = api.rpartition("/")
    gvk = (group, version, doc.kind)
    found = schemas.faults(gvk, doc.body)
    if found is not None:
        return _fault_issues(tree, doc, found, f"the API of Kubernetes {shown(target)}", api)
    defined, served = crds
    crd = defined.get(gvk)
    if crd is not None and crd.served:
        checker = crd.validator()
        if checker is None:
            return []
        schema = f"the schema of the chart's CRD {crd.crd}"
        return _fault_issues(tree, doc, _crd_faults(doc.body, checker), schema, api)
    if group in schemas.groups or (group, doc.kind) in served:
        return [_unserved(tree, doc, api, target, served.get((group, doc.kind), ()))]
    return []  # a kind of an API the chart does not define: nothing here to check it with


def _crd_faults(body: Mapping[str, Any], checker: Checker) -> tuple[Fault, ...]:
    """A custom resource's faults, once per object and schema however many renders share it."""
    return _FAULTS.get_or_make((body, checker), None, lambda: faults(checker.errors(body), body))


def _fault_issues(
    tree: Tree, doc: Document, found: Sequence[Fault], schema: str, api: str
) -> list[Issue]:
    issues = [_fault_issue(tree, doc, f, schema, api) for f in found[:MAX_FAULTS_PER_OBJECT]]
    rest = found[MAX_FAULTS_PER_OBJECT:]
    if rest:
        fields = ", ".join(f.field for f in rest)
        issues.append(
            Issue(
                rule=REJECTED,
                subject=doc.key,
                container=None,
                detail=f"{len(rest)} more fields",
                title=f"{doc.key}: {len(rest)} more fields at fault",
                message=(
                    f"{doc.key}: {len(rest)} more fields do not match {schema}, beyond the "
                    f"{MAX_FAULTS_PER_OBJECT} said of one object: {fields}."
                ),
                path=doc.template,
                data={"fields": [f.field for f in rest], "schema": schema},
                locate=partial(_line, tree, doc, ()),
            )
        )
    return issues


def _fault_issue(tree: Tree, doc: Document, fault: Fault, schema: str, api: str) -> Issue:
    return Issue(
        rule=fault.rule,
        subject=doc.key,
        container=None,
        detail=f"{fault.field}: {fault.problem}",
        title=f"{doc.key}: {fault.field} {_short(fault)}",
        message=(
            f"{doc.key}: {fault.field} {fault.problem} ({api} {doc.kind}, {schema}): "
            f"{CONSEQUENCE[fault.rule]}."
        ),
        path=doc.template,
        data={"field": fault.field, "problem": fault.problem, "schema": schema},
        locate=partial(_line, tree, doc, fault.path),
    )


def _short(fault: Fault) -> str:
    return "is not a known field" if fault.rule == UNKNOWN else fault.problem.split(",")[0]


def _unserved(
    tree: Tree, doc: Document, api: str, target: Minor, crd_versions: Sequence[str]
) -> Issue:
    if crd_versions:
        where = f"the chart's CRD for {doc.kind} serves {', '.join(crd_versions)}, not this version"
    else:
        where = f"Kubernetes {shown(target)} serves no {doc.kind} in {api}"
    return Issue(
        rule=UNSERVED,
        subject=doc.key,
        container=None,
        detail=f"{api} {doc.kind}",
        title=f"{doc.key}: {api} {doc.kind} is not served",
        message=f"{doc.key}: {where}: the API server has no such kind, and refuses the object.",
        path=doc.template,
        data={"api_version": api, "kind": doc.kind, "kube_version": shown(target)},
        locate=partial(_line, tree, doc, ("apiVersion",)),
    )


def _line(tree: Tree, doc: Document, path: Sequence[str | int]) -> int | None:
    return field_line(tree.text(doc.template), doc.kind, doc.name, path or ("kind",), doc.body)


def _not_validated(ctx: ChartContext) -> Finding:
    versions = shipped()
    have = f"v{shown(versions[0])}–v{shown(versions[-1])}" if versions else "none"
    target = ctx.kube_version or "an unknown Kubernetes version"
    return Finding(
        check=NAME,
        severity=Severity.NOTICE,
        rule=NOT_VALIDATED,
        title=f"{ctx.chart.path}: not checked against the Kubernetes API of {target}",
        message=(
            f"The chart was rendered for {target}, and the review has the Kubernetes API's "
            f"schemas of {have} only (kubernetes-validate): its objects were not checked against "
            "the API; apiVersions were checked against the deprecation table where the version "
            "is known. Render for a version it has (`--kube-version`, `kube_version:`) to check them."
        ),
        chart=ctx.chart.path,
        data={"kube_version": ctx.kube_version, "schemas": [shown(v) for v in versions]},
    )


CHECK = Check(NAME, "Kubernetes API", run, "chart", quiet=True)
