"""Containers the API server would refuse under a rendered ResourceQuota.

A quota that tracks a compute resource makes every pod in its namespace that it applies to state
that resource: the quota admission plugin rejects a pod whose container sets no `requests.cpu`
under a quota with `requests.cpu` (or the bare `cpu`, which means the same) in `spec.hard`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.model.manifests import Document, pod_spec
from checks.qos.classes import QoSClass
from checks.qos.compare import PodView
from checks.qos.pod import ROLE_POD, Requirements

# spec.hard key -> the field every container (or the pod-level resources) must then set
CONSTRAINED_FIELDS = {
    "cpu": "requests.cpu",
    "memory": "requests.memory",
    "requests.cpu": "requests.cpu",
    "requests.memory": "requests.memory",
    "limits.cpu": "limits.cpu",
    "limits.memory": "limits.memory",
}
_SCOPE_CHECKS = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "PriorityClass")


@dataclass(frozen=True)
class Quota:
    namespace: str
    name: str
    fields: frozenset[str]  # e.g. {"requests.cpu", "limits.memory"}
    scopes: tuple[tuple[str, str, tuple[str, ...]], ...]  # (scope, operator, values)


@dataclass(frozen=True)
class QuotaGap:
    """A field a quota requires that a container (or the pod-level resources) does not set."""

    pod: str
    role: str
    container: str | None
    field: str
    quotas: tuple[str, ...]  # names of the quotas that require it

    @property
    def identity(self) -> tuple[str, str | None, str]:
        return self.pod, self.container, self.field


def quotas(docs: Iterable[Document]) -> list[Quota]:
    found = []
    for doc in docs:
        if doc.kind != "ResourceQuota":
            continue
        spec = doc.body.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        hard = spec.get("hard")
        keys = hard.keys() if isinstance(hard, dict) else ()
        fields = frozenset(CONSTRAINED_FIELDS[k] for k in keys if k in CONSTRAINED_FIELDS)
        if fields:
            found.append(Quota(doc.namespace, doc.name, fields, _scopes(spec)))
    return found


def quota_gaps(docs: Iterable[Document], pods: Mapping[str, PodView]) -> list[QuotaGap]:
    """Every (pod, container, field) a quota of the pod's namespace requires and the pod lacks."""
    active = quotas(docs)
    if not active:  # most renders hold no quota: no pod need be looked at
        return []
    gaps: list[QuotaGap] = []
    for view in pods.values():
        applying = [q for q in active if q.namespace == view.doc.namespace and _applies(q, view)]
        for field in sorted({f for q in applying for f in q.fields}):
            names = tuple(q.name for q in applying if field in q.fields)
            gaps += [
                QuotaGap(view.key, role, name, field, names) for role, name in _lacking(view, field)
            ]
    return gaps


def _lacking(view: PodView, field: str) -> list[tuple[str, str | None]]:
    resources = view.qos.resources
    if resources.pod is not None:  # pod-level resources answer for the whole pod
        return [] if _sets(resources.pod, field) else [(ROLE_POD, None)]
    return [(c.role, c.name) for c in resources.containers if not _sets(c.resources, field)]


def _sets(req: Requirements, field: str) -> bool:
    kind, _, resource = field.partition(".")
    # Requests are read after defaulting: a limit alone also sets the request.
    return resource in (req.requests if kind == "requests" else req.limits)


def _scopes(spec: Mapping[str, Any]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    plain = spec.get("scopes")
    scopes = [(str(s), "Exists", ()) for s in plain] if isinstance(plain, list) else []
    selector = spec.get("scopeSelector")
    expressions = selector.get("matchExpressions") if isinstance(selector, dict) else None
    for expr in expressions if isinstance(expressions, list) else ():
        if isinstance(expr, dict):
            values = expr.get("values")
            values = tuple(str(v) for v in values) if isinstance(values, list) else ()
            scopes.append((str(expr.get("scopeName")), str(expr.get("operator")), values))
    return tuple(scopes)


def _applies(quota: Quota, view: PodView) -> bool:
    return all(_scope_matches(scope, view) for scope in quota.scopes)


def _scope_matches(scope: tuple[str, str, tuple[str, ...]], view: PodView) -> bool:
    name, operator, values = scope
    if name not in _SCOPE_CHECKS:
        return False  # a scope we cannot evaluate: stay quiet rather than guess
    if name == "PriorityClass":
        return _priority_matches(operator, values, view)
    best_effort = view.qos_class is QoSClass.BEST_EFFORT
    terminating = _deadline(view) is not None
    return {
        "BestEffort": best_effort,
        "NotBestEffort": not best_effort,
        "Terminating": terminating,
        "NotTerminating": not terminating,
    }[name]


def _priority_matches(operator: str, values: tuple[str, ...], view: PodView) -> bool:
    priority = _pod_field(view, "priorityClassName")
    name = priority if isinstance(priority, str) else ""
    if operator == "In":
        return name in values
    if operator == "NotIn":
        return name not in values
    if operator == "Exists":
        return bool(name)
    return operator == "DoesNotExist" and not name


def _deadline(view: PodView) -> Any:
    value = _pod_field(view, "activeDeadlineSeconds")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _pod_field(view: PodView, field: str) -> Any:
    spec = pod_spec(view.doc)
    return spec.get(field) if spec is not None else None
