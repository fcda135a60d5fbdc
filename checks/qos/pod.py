"""A pod spec's resources as the API server stores them, from which checks/qos/classes.py computes
the QoS class the kubelet gives it.

Mirrors Kubernetes' `ComputePodQOS` (pkg/apis/core/helper/qos) on a pod after the API server's
defaulting (pkg/apis/core/v1/defaults.go: a container's missing request takes its limit; pod-level
requests and limits default from the containers), with the PodLevelResources and
PodLevelResourcesFixKubeletQOSClass gates at their current default: on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from bot.kube.quantity import QuantityError, parse_quantity

CPU, MEMORY = "cpu", "memory"
COMPUTE = (CPU, MEMORY)  # only these two decide a QoS class; hugepages and the rest never do
HUGEPAGES_PREFIX = "hugepages-"
ROLE_APP, ROLE_INIT, ROLE_SIDECAR, ROLE_POD = (
    "container",
    "init container",
    "sidecar container",
    "pod",
)

ResourceList = Mapping[str, Fraction]


@dataclass(frozen=True)
class BadQuantity:
    """A value under `resources` that is not a quantity; the API server would refuse the pod."""

    role: str
    container: str | None  # None for pod-level `spec.resources`
    field: str  # e.g. "limits.cpu"
    value: str
    reason: str


@dataclass(frozen=True)
class Requirements:
    """One `resources` block. `requests`/`limits` hold every parseable resource after defaulting;
    `declared` the fields written in the manifest (`requests.cpu`, ...), before defaulting."""

    requests: ResourceList
    limits: ResourceList
    declared: frozenset[str]


@dataclass(frozen=True)
class Container:
    name: str
    role: str  # ROLE_APP, ROLE_INIT or ROLE_SIDECAR
    resources: Requirements


@dataclass(frozen=True)
class PodResources:
    containers: tuple[Container, ...]  # app containers first, then init containers in order
    pod: Requirements | None  # pod-level `spec.resources`, when it sets a supported resource
    bad: tuple[BadQuantity, ...]


def read_pod(spec: Mapping[str, Any]) -> PodResources:
    """Every container's and the pod's requirements, defaulted as the API server would."""
    bad: list[BadQuantity] = []
    containers = [_container(raw, ROLE_APP, bad) for raw in _list(spec.get("containers"))] + [
        _container(raw, _init_role(raw), bad) for raw in _list(spec.get("initContainers"))
    ]
    pod_raw = spec.get("resources")
    pod = _requirements(pod_raw, ROLE_POD, None, bad) if isinstance(pod_raw, dict) else None
    if pod is not None and not _pod_level_set(pod):
        pod = None
    if pod is not None:
        pod = _default_pod_level(pod, containers)
    return PodResources(tuple(containers), pod, tuple(bad))


def positive_compute(resources: ResourceList) -> dict[str, Fraction]:
    """The cpu and memory entries the kubelet counts: a zero (or negative) quantity is unset."""
    return {name: q for name, q in resources.items() if name in COMPUTE and q > 0}


def add_lists(total: dict[str, Fraction], more: ResourceList) -> None:
    for name, quantity in more.items():
        total[name] = total[name] + quantity if name in total else quantity


def _container(raw: Any, role: str, bad: list[BadQuantity]) -> Container:
    node = raw if isinstance(raw, dict) else {}
    name = str(node.get("name", "?"))
    return Container(name, role, _requirements(node.get("resources"), role, name, bad))


def _init_role(raw: Any) -> str:
    # A restartable init container (`restartPolicy: Always`) is a sidecar: it runs beside the app.
    restartable = isinstance(raw, dict) and raw.get("restartPolicy") == "Always"
    return ROLE_SIDECAR if restartable else ROLE_INIT


def _requirements(raw: Any, role: str, name: str | None, bad: list[BadQuantity]) -> Requirements:
    node = raw if isinstance(raw, dict) else {}
    requests = _resource_list(node.get("requests"), "requests", role, name, bad)
    limits = _resource_list(node.get("limits"), "limits", role, name, bad)
    declared = frozenset(f"requests.{r}" for r in requests) | frozenset(
        f"limits.{r}" for r in limits
    )
    if role != ROLE_POD:  # a container's missing request takes its limit (SetDefaults_Pod)
        requests = {**limits, **requests}
    return Requirements(requests, limits, declared)


def _resource_list(
    raw: Any, kind: str, role: str, name: str | None, bad: list[BadQuantity]
) -> dict[str, Fraction]:
    values: dict[str, Fraction] = {}
    if not isinstance(raw, dict):
        return values
    for resource, text in raw.items():
        try:
            # JSON null decodes to a zero Quantity: `cpu:` with nothing after it is 0, not an error.
            values[str(resource)] = Fraction(0) if text is None else parse_quantity(text)
        except QuantityError as exc:
            bad.append(BadQuantity(role, name, f"{kind}.{resource}", str(text), exc.reason))
    return values


def _supported_pod_level(name: str) -> bool:
    return name in COMPUTE or name.startswith(HUGEPAGES_PREFIX)


def _pod_level_set(pod: Requirements) -> bool:
    return any(_supported_pod_level(n) for n in (*pod.requests, *pod.limits))


def _default_pod_level(pod: Requirements, containers: list[Container]) -> Requirements:
    """Pod-level defaulting (defaultPodRequests, defaultPodLimits), for cpu and memory."""
    requests, limits = dict(pod.requests), dict(pod.limits)
    if any(_supported_pod_level(n) for n in limits):
        # A missing pod request takes the containers' effective request, else the pod limit.
        aggregate = effective_total(containers, "requests")
        for name in COMPUTE:
            if name not in requests and name in aggregate:
                requests[name] = aggregate[name]
        for name, quantity in limits.items():
            if name not in requests and _supported_pod_level(name):
                requests[name] = quantity
    elif any(_supported_pod_level(n) for n in requests):
        # No pod limits: a missing one takes the containers' total when every container sets it.
        aggregate = effective_total(containers, "limits")
        for name in COMPUTE:
            if name in aggregate and all(name in c.resources.limits for c in containers):
                limits[name] = aggregate[name]
    return Requirements(requests, limits, pod.declared)


def effective_total(containers: Iterable[Container], kind: str) -> dict[str, Fraction]:
    """What the pod needs, by the sidecar KEP's rule: app containers and sidecars add up; a plain
    init container runs alone (beside the sidecars started before it), so only its peak counts."""
    total: dict[str, Fraction] = {}
    sidecars: dict[str, Fraction] = {}
    init_peak: dict[str, Fraction] = {}
    for container in containers:
        values = getattr(container.resources, kind)
        if container.role == ROLE_APP:
            add_lists(total, values)
        elif container.role == ROLE_SIDECAR:
            add_lists(total, values)
            add_lists(sidecars, values)
            _max_into(init_peak, sidecars)
        else:
            running = dict(sidecars)
            add_lists(running, values)
            _max_into(init_peak, running)
    _max_into(total, init_peak)
    return total


def _max_into(target: dict[str, Fraction], other: ResourceList) -> None:
    for name, quantity in other.items():
        if name not in target or quantity > target[name]:
            target[name] = quantity


def _list(node: Any) -> list[Any]:
    return node if isinstance(node, list) else []
