"""The `selectors` check: selectors that select nothing.

A Service, PodDisruptionBudget, NetworkPolicy or workload selector that matches no rendered pod is
a failure; a `kubectl … -l` selector in a rendered script that matches nothing is a warning, naming
the labels the pods do carry; a Service newly publishing not-ready addresses is said too. A
Service whose selector matches no pod has no endpoints; a PodDisruptionBudget or NetworkPolicy that
matches none protects nothing; a workload whose selector misses its own pod template is rejected by
the API server; a `kubectl -l` that matches nothing makes the script a silent no-op. The JSON
finding's `data.intended` names the pods the selector most plausibly meant, and their labels.

Pods are the chart's rendered pod templates, subcharts' included, with the labels their
controllers add: a StatefulSet's `statefulset.kubernetes.io/pod-name` (`NAME-0` … for its
replicas, up to 64) and `apps.kubernetes.io/pod-index`, a Job's `job-name`; a selector needing a
label only the running controller gives a value (`pod-template-hash`, `controller-revision-hash`,
`controller-uid`) is not judged."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial

from bot.git.objects import Tree
from bot.model.check import Check
from bot.model.context import ChartContext, Rendered
from bot.model.manifests import Document, find_line
from bot.model.report import Finding, Severity
from checks.kit.delta import Issue, changes_only, compare
from checks.kit.template_lines import key_pattern, kind_line, nested_line
from checks.selectors.controllers import running_pods, runtime_only
from checks.selectors.intended import intended
from checks.selectors.labels import Pod, PodIndex, Selector, describe, hints, selected
from checks.selectors.objects import Read, render_reads
from checks.selectors.scripts import ANY, POD, ScriptSelector

NAME = "selectors"
NOTHING, SCRIPT, NOT_READY = "selects-nothing", "script-selector", "publish-not-ready"
SEVERITY = {NOTHING: Severity.FAILURE, SCRIPT: Severity.WARNING, NOT_READY: Severity.NOTICE}
CONSEQUENCE = {
    "Service": "the Service has no endpoints",
    "PodDisruptionBudget": "the budget protects no pod",
    "NetworkPolicy": "the policy applies to no pod",
}
OWN = "the API server rejects the workload (selector does not match template labels)"
TITLE_NOTHING = "{subject}: {field} selects no pod"
MSG_NOTHING = "{subject}: {field} {selector} matches {scope}: {hints}; {consequence}."
SCOPE_NAMESPACE = "no pod rendered in namespace {namespace}"
SCOPE_OWN = "its own pod template"
TITLE_SCRIPT = "{subject}: `kubectl -l {selector}` in {where} selects nothing"
MSG_SCRIPT = (
    "{subject}: the kubectl selector `{selector}` in {where} matches no {noun} rendered in "
    "{scope}: {hints}{intended}. The command would act on nothing."
)
TITLE_NOT_READY = "{subject}: now publishes pods that are not Ready"
MSG_NOT_READY = (
    "{subject} now sets publishNotReadyAddresses: true (base did not): its endpoints and DNS "
    "include pods that are not Ready, so clients can reach them before their readiness probe passes."
)


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    base = {p: _issues(ctx.base, r) for p, r in chart.base.items()}
    head = {p: _issues(ctx.head, r) for p, r in chart.head.items()}
    turned_on = {p: _not_ready(ctx.head, chart.base.get(p), r) for p, r in chart.head.items()}
    findings = compare(NAME, chart.path, base, head, SEVERITY)
    return findings + changes_only(NAME, chart.path, turned_on, SEVERITY)


def pods(docs: tuple[Document, ...]) -> list[Pod]:
    return _pods(render_reads(docs))


def _pods(objects: Sequence[Read]) -> list[Pod]:
    return [
        pod for d, r in objects if r.pod_labels is not None for pod in running_pods(d, r.pod_labels)
    ]


def _issues(tree: Tree, rendered: Rendered) -> list[Issue] | None:
    if rendered.error is not None:
        return None
    docs = rendered.documents
    objects = render_reads(docs)
    all_pods = _pods(objects)
    index = PodIndex(all_pods)
    issues = []
    for doc, read in objects:
        if read.selector is None:
            continue
        field, selector = read.selector
        if doc.kind not in CONSEQUENCE:  # a workload's selector must match its own template
            scope = [Pod(doc.kind, doc.name, doc.namespace, read.pod_labels or {})]
            if not selected(selector, scope):
                issues.append(_nothing(tree, doc, field, selector, scope, True))
        elif not index.selects_any(selector, doc.namespace) and not runtime_only(selector):
            scope = index.in_namespace(doc.namespace)
            issues.append(_nothing(tree, doc, field, selector, scope, False))
    for doc, read in objects:
        for where, found in read.scripts:
            targets = _targets(found, doc.namespace, objects, all_pods)
            if not selected(found.selector, targets):
                issues.append(_script(tree, doc, where, found, targets))
    return issues


def _nothing(
    tree: Tree, doc: Document, field: str, selector: Selector, scope: list[Pod], own: bool
) -> Issue:
    found = hints(selector, scope)
    culprit = next(
        (r.key for r in selector if not any(r.matches(p.labels) for p in scope)), selector[0].key
    )
    key = field.split(".")[1]
    chain = (key, culprit) if doc.kind == "Service" else (key, "matchLabels", culprit)
    fmt = {"subject": doc.key, "field": field, "selector": describe(selector)}
    return Issue(
        rule=NOTHING,
        subject=doc.key,
        container=None,
        detail=f"{field} {describe(selector)}",
        title=TITLE_NOTHING.format(**fmt),
        message=MSG_NOTHING.format(
            scope=SCOPE_OWN if own else SCOPE_NAMESPACE.format(namespace=doc.namespace),
            hints="; ".join(found) or "no pod at all",
            consequence=OWN if own else CONSEQUENCE[doc.kind],
            **fmt,
        ),
        path=doc.template,
        locate=partial(_nested_line, tree, doc, chain),
        data={"selector": describe(selector), "hints": found},
    )


def _nested_line(tree: Tree, doc: Document, chain: tuple[str, ...]) -> int | None:
    source = tree.text(doc.template)
    return nested_line(source, *chain) or kind_line(source, doc.kind)


def _targets(
    found: ScriptSelector, namespace: str, objects: Sequence[Read], all_pods: list[Pod]
) -> list[Pod]:
    def here(ns: str) -> bool:
        return found.all_namespaces or ns == (found.namespace or namespace)

    targets = [p for p in all_pods if here(p.namespace)] if found.kinds & {POD, ANY} else []
    targets += [
        Pod(d.kind, d.name, d.namespace, r.own_labels, True)
        for d, r in objects
        if here(d.namespace) and (ANY in found.kinds or d.kind in found.kinds)
    ]
    return targets


def _script(
    tree: Tree, doc: Document, where: str, found: ScriptSelector, targets: list[Pod]
) -> Issue:
    noun = "pod" if found.kinds == {POD} else "/".join(sorted(found.kinds - {ANY}) or ["object"])
    scope = (
        "any namespace" if found.all_namespaces else f"namespace {found.namespace or doc.namespace}"
    )
    found_hints = hints(found.selector, targets, noun)
    meant = intended(found.selector, targets, (doc.kind, doc.name, doc.namespace))
    fmt = {"subject": doc.key, "selector": found.text, "where": where}
    return Issue(
        rule=SCRIPT,
        subject=doc.key,
        container=where,
        detail=f"{found.text} in {scope}",
        title=TITLE_SCRIPT.format(**fmt),
        message=MSG_SCRIPT.format(
            noun=noun,
            scope=scope,
            hints="; ".join(found_hints) or f"no {noun} at all",
            intended=f"; {meant.sentence()}" if meant else "",
            **fmt,
        ),
        path=doc.template,
        locate=partial(_script_line, tree, doc, found.text),
        data={
            "selector": found.text,
            "kinds": sorted(found.kinds),
            "hints": found_hints,
            "intended": meant.to_json() if meant else None,
        },
    )


def _script_line(tree: Tree, doc: Document, selector: str) -> int | None:
    """The head template's line where the selector is written: after its flag, else anywhere (an
    argv list, `["-l", "app=x"]`), else the first kubectl line with a selector flag (the selector
    comes from a value), else the object's kind."""
    source = tree.text(doc.template)
    written = re.escape(selector)
    line = (
        find_line(source, rf"(-l|--selector)[= ]*[\"']?{written}(?![\w./-])")
        or find_line(source, rf"(?<![\w./-]){written}(?![\w./-])")
        or find_line(
            source, r"kubectl.*(\s-l|--selector)", key_pattern("command"), key_pattern("args")
        )
    )
    return line or kind_line(source, doc.kind)


def _not_ready(tree: Tree, base: Rendered | None, head: Rendered) -> list[Issue]:
    if head.error is not None or (base is not None and base.error is not None):
        return []
    before = {
        d.key
        for d, read in (render_reads(base.documents) if base is not None else ())
        if read.publishes_not_ready
    }
    issues = []
    for doc, read in render_reads(head.documents):
        if not read.publishes_not_ready or doc.key in before:
            continue
        issues.append(
            Issue(
                rule=NOT_READY,
                subject=doc.key,
                container=None,
                detail="publishNotReadyAddresses",
                title=TITLE_NOT_READY.format(subject=doc.key),
                message=MSG_NOT_READY.format(subject=doc.key),
                path=doc.template,
                locate=partial(_not_ready_line, tree, doc),
            )
        )
    return issues


def _not_ready_line(tree: Tree, doc: Document) -> int | None:
    source = tree.text(doc.template)
    return find_line(source, key_pattern("publishNotReadyAddresses")) or kind_line(source, doc.kind)


CHECK = Check(NAME, "Selectors", run, "chart")
