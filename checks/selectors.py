"""The `selectors` check: selectors that select nothing.

A Service whose selector matches no pod has no endpoints; a PodDisruptionBudget or NetworkPolicy
that matches none protects nothing; a workload whose selector misses its own pod template is
rejected by the API server; a `kubectl -l` in a rendered script that matches nothing makes the
script a silent no-op. Pods are the chart's rendered pod templates, subcharts' included."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from bot.context import Context, Rendered, Tree
from bot.manifests import Document, find_line, pod_labels, pod_spec, workloads
from bot.report import Finding, Severity
from checks.base import Check
from checks.containers import containers, mapping
from checks.delta import Issue, changes_only, compare
from checks.label_selectors import (
    Pod,
    Selector,
    describe,
    from_label_selector,
    from_map,
    hints,
    labels_of,
    selected,
)
from checks.script_selectors import ANY, POD, ScriptSelector, argv_selectors, kubectl_selectors
from checks.template_lines import key_pattern, kind_line, nested_line

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
    "{scope}: {hints}. The command would act on nothing."
)
TITLE_NOT_READY = "{subject}: now publishes pods that are not Ready"
MSG_NOT_READY = (
    "{subject} now sets publishNotReadyAddresses: true (base did not): its endpoints and DNS "
    "include pods that are not Ready, so clients can reach them before their readiness probe passes."
)


def run(ctx: Context) -> list[Finding]:
    chart = ctx.chart
    if chart is None:
        return []
    base = {p: _issues(ctx.base, r) for p, r in chart.base.items()}
    head = {p: _issues(ctx.head, r) for p, r in chart.head.items()}
    turned_on = {p: _not_ready(ctx.head, chart.base.get(p), r) for p, r in chart.head.items()}
    findings = compare(NAME, chart.path, base, head, SEVERITY)
    return findings + changes_only(NAME, chart.path, turned_on, SEVERITY)


def pods(docs: tuple[Document, ...]) -> list[Pod]:
    return [Pod(d.kind, d.name, d.namespace, labels_of(pod_labels(d))) for d, _ in workloads(docs)]


def _issues(tree: Tree, rendered: Rendered) -> list[Issue] | None:
    if rendered.error is not None:
        return None
    docs = rendered.documents
    all_pods = pods(docs)
    issues = []
    for doc, field, selector in _resource_selectors(docs):
        own = doc.kind not in CONSEQUENCE  # a workload's selector must match its own template
        scope = (
            [Pod(doc.kind, doc.name, doc.namespace, labels_of(pod_labels(doc)))]
            if own
            else [p for p in all_pods if p.namespace == doc.namespace]
        )
        if not selected(selector, scope):
            issues.append(_nothing(tree, doc, field, selector, scope, own))
    for doc, where, found in _script_selectors(docs):
        targets = _targets(found, doc.namespace, docs, all_pods)
        if not selected(found.selector, targets):
            issues.append(_script(tree, doc, where, found, targets))
    return issues


def _resource_selectors(docs: tuple[Document, ...]) -> Iterator[tuple[Document, str, Selector]]:
    for doc in docs:
        spec = mapping(doc.body, "spec")
        if doc.kind == "Service" and spec.get("type") != "ExternalName":
            selector: Selector | None = from_map(spec.get("selector"))
            field = "spec.selector"
        elif doc.kind == "PodDisruptionBudget":
            selector, field = from_label_selector(spec.get("selector")), "spec.selector"
        elif doc.kind == "NetworkPolicy":
            selector, field = from_label_selector(spec.get("podSelector")), "spec.podSelector"
        elif doc.kind != "CronJob" and pod_spec(doc) is not None and "selector" in spec:
            selector, field = from_label_selector(spec.get("selector")), "spec.selector"
        else:
            continue
        if selector:  # an empty selector selects every pod (or, on a Service, means "no selector")
            yield doc, field, selector


def _nothing(
    tree: Tree, doc: Document, field: str, selector: Selector, scope: list[Pod], own: bool
) -> Issue:
    found = hints(selector, scope)
    culprit = next(
        (r.key for r in selector if not any(r.matches(p.labels) for p in scope)), selector[0].key
    )
    source = tree.text(doc.template)
    key = field.split(".")[1]
    chain = (key, culprit) if doc.kind == "Service" else (key, "matchLabels", culprit)
    line = nested_line(source, *chain)
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
        line=line or kind_line(source, doc.kind),
        data={"selector": describe(selector), "hints": found},
    )


def _script_selectors(
    docs: tuple[Document, ...],
) -> Iterator[tuple[Document, str, ScriptSelector]]:
    """(object, where in it, selector): ConfigMap values, then containers' command and args."""
    for doc in docs:
        if doc.kind == "ConfigMap":
            for key, value in sorted(mapping(doc.body, "data").items()):
                for found in kubectl_selectors(value) if isinstance(value, str) else ():
                    yield doc, f"data key {key}", found
        spec = pod_spec(doc)
        for container in containers(spec) if spec is not None else ():
            argv = [*_words(container.body.get("command")), *_words(container.body.get("args"))]
            for found in argv_selectors(argv):
                yield doc, container.who, found


def _words(node: Any) -> list[str]:
    return [str(w) for w in node] if isinstance(node, list) else []


def _targets(
    found: ScriptSelector, namespace: str, docs: tuple[Document, ...], all_pods: list[Pod]
) -> list[Pod]:
    def here(ns: str) -> bool:
        return found.all_namespaces or ns == (found.namespace or namespace)

    targets = [p for p in all_pods if here(p.namespace)] if found.kinds & {POD, ANY} else []
    targets += [
        Pod(d.kind, d.name, d.namespace, labels_of(mapping(d.body, "metadata").get("labels")), True)
        for d in docs
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
    fmt = {"subject": doc.key, "selector": found.text, "where": where}
    source = tree.text(doc.template)
    line = find_line(source, rf"(-l|--selector)[= ]*[\"']?{re.escape(found.text)}") or find_line(
        source, r"kubectl.*(\s-l|--selector)", key_pattern("command"), key_pattern("args")
    )
    return Issue(
        rule=SCRIPT,
        subject=doc.key,
        container=where,
        detail=f"{found.text} in {scope}",
        title=TITLE_SCRIPT.format(**fmt),
        message=MSG_SCRIPT.format(
            noun=noun, scope=scope, hints="; ".join(found_hints) or f"no {noun} at all", **fmt
        ),
        path=doc.template,
        line=line or kind_line(source, doc.kind),
        data={"selector": found.text, "kinds": sorted(found.kinds), "hints": found_hints},
    )


def _not_ready(tree: Tree, base: Rendered | None, head: Rendered) -> list[Issue]:
    if head.error is not None or (base is not None and base.error is not None):
        return []
    before = {
        d.key
        for d in (base.documents if base is not None else ())
        if d.kind == "Service" and mapping(d.body, "spec").get("publishNotReadyAddresses") is True
    }
    issues = []
    for doc in head.documents:
        spec = mapping(doc.body, "spec")
        if doc.kind != "Service" or spec.get("publishNotReadyAddresses") is not True:
            continue
        if doc.key in before:
            continue
        source = tree.text(doc.template)
        issues.append(
            Issue(
                rule=NOT_READY,
                subject=doc.key,
                container=None,
                detail="publishNotReadyAddresses",
                title=TITLE_NOT_READY.format(subject=doc.key),
                message=MSG_NOT_READY.format(subject=doc.key),
                path=doc.template,
                line=find_line(source, key_pattern("publishNotReadyAddresses"))
                or kind_line(source, doc.kind),
            )
        )
    return issues


CHECK = Check(NAME, "Selectors", run, "chart")
