"""The QoS class of a pod spec, and why it is not Guaranteed, in a reviewer's words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction
from typing import Any

from bot.kube.quantity import format_quantity
from checks.qos.pod import (
    COMPUTE,
    ROLE_POD,
    BadQuantity,
    Container,
    PodResources,
    Requirements,
    add_lists,
    positive_compute,
    read_pod,
)


class QoSClass(StrEnum):
    GUARANTEED = "Guaranteed"
    BURSTABLE = "Burstable"
    BEST_EFFORT = "BestEffort"

    @property
    def rank(self) -> int:
        """Eviction order: a higher rank is evicted first, so a rise in rank is a downgrade."""
        return _RANK[self]


_RANK = {QoSClass.GUARANTEED: 0, QoSClass.BURSTABLE: 1, QoSClass.BEST_EFFORT: 2}

NO_RESOURCES = "sets no resources (neither requests nor limits on cpu or memory)"
NO_LIMIT = "sets {request} but no {limit}"
NEITHER = "sets neither {request} nor {limit}"
ZERO_LIMIT = "sets {limit} to 0, which counts as unset"
UNEQUAL = "has {request} ({req}) != {limit} ({lim})"
UNEQUAL_DEFAULTED = "has {request} ({req}, defaulted from the containers) != {limit} ({lim})"
POD_LEVEL = "pod-level spec.resources"


@dataclass(frozen=True)
class Cause:
    """One reason a pod is not Guaranteed: a container (or the pod level) and what it lacks."""

    role: str
    container: str | None
    problem: str
    fields: tuple[str, ...]

    def describe(self) -> str:
        who = POD_LEVEL if self.role == ROLE_POD else f"{self.role} {self.container}"
        return f"{who} {self.problem}"

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "container": self.container,
            "fields": list(self.fields),
            "text": self.describe(),
        }


@dataclass(frozen=True)
class PodQoS:
    qos_class: QoSClass
    causes: tuple[Cause, ...]  # empty when Guaranteed
    bad_quantities: tuple[BadQuantity, ...]
    resources: PodResources


def pod_qos(spec: Mapping[str, Any]) -> PodQoS:
    """The pod's class as the kubelet computes it, and every cause that keeps it from Guaranteed."""
    resources = read_pod(spec)
    if resources.pod is not None:  # pod-level resources, when set, alone decide the class
        cls = _pod_level_class(resources.pod)
        causes = () if cls is QoSClass.GUARANTEED else _requirement_causes(resources.pod, ROLE_POD)
    else:
        cls = _container_class(resources.containers)
        causes = () if cls is QoSClass.GUARANTEED else _container_causes(resources.containers)
    return PodQoS(cls, causes, resources.bad, resources)


def _container_class(containers: tuple[Container, ...]) -> QoSClass:
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    for container in containers:
        add_lists(requests, positive_compute(container.resources.requests))
        found = positive_compute(container.resources.limits)
        add_lists(limits, found)
        guaranteed = guaranteed and set(COMPUTE) <= set(found)
    return _decide(requests, limits, guaranteed)


def _pod_level_class(pod: Requirements) -> QoSClass:
    limits = positive_compute(pod.limits)
    # Only a pod that sets limits at all must set both; with no limits the sums decide below.
    guaranteed = not pod.limits or set(COMPUTE) <= set(limits)
    return _decide(positive_compute(pod.requests), limits, guaranteed)


def _decide(
    requests: Mapping[str, Fraction], limits: Mapping[str, Fraction], guaranteed: bool
) -> QoSClass:
    if not requests and not limits:
        return QoSClass.BEST_EFFORT
    equal = all(name in limits and limits[name] == q for name, q in requests.items())
    if guaranteed and equal and len(requests) == len(limits):
        return QoSClass.GUARANTEED
    return QoSClass.BURSTABLE


def _container_causes(containers: tuple[Container, ...]) -> tuple[Cause, ...]:
    causes: list[Cause] = []
    for container in containers:
        if not any(f.partition(".")[2] in COMPUTE for f in container.resources.declared):
            fields = tuple(f"{k}.{r}" for k in ("requests", "limits") for r in COMPUTE)
            causes.append(Cause(container.role, container.name, NO_RESOURCES, fields))
            continue
        causes.extend(_requirement_causes(container.resources, container.role, container.name))
    return tuple(causes)


def _requirement_causes(
    req: Requirements, role: str, container: str | None = None
) -> tuple[Cause, ...]:
    causes = []
    for resource in COMPUTE:
        problem = _dimension_problem(req, resource, role)
        if problem is not None:
            text, fields = problem
            causes.append(Cause(role, container, text, fields))
    return tuple(causes)


def _dimension_problem(
    req: Requirements, resource: str, role: str
) -> tuple[str, tuple[str, ...]] | None:
    request, limit = f"requests.{resource}", f"limits.{resource}"
    names = {"request": request, "limit": limit}
    req_value, lim_value = req.requests.get(resource), req.limits.get(resource)
    if lim_value is None:
        if req_value is None:
            return NEITHER.format(**names), (request, limit)
        return NO_LIMIT.format(**names), (limit,)
    if lim_value <= 0:
        return ZERO_LIMIT.format(**names), (limit,)
    if req_value is not None and req_value != lim_value:
        template = UNEQUAL
        if role == ROLE_POD and request not in req.declared:
            template = UNEQUAL_DEFAULTED
        values = {"req": format_quantity(req_value), "lim": format_quantity(lim_value)}
        return template.format(**names, **values), (request, limit)
    return None
