"""`pod_qos`, computed once per distinct resources, whatever the containers are called.

Profiles and sides repeat the same pods, and a chart's workloads mostly share one resources block
(`toYaml .Values.resources`) under different container names. So a spec seen before is found by
identity (identical rendered text parses to the very same objects); else its resources are looked
up without the names, and a class computed for other names is given this spec's names, container
by container: the class and every cause depend on the resources and roles alone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.lru import BoundedCache, IdentityMemo
from checks.qos_class import Cause, PodQoS, pod_qos
from checks.qos_pod import BadQuantity, Container, PodResources

SPECS_REMEMBERED = 4096

_BY_SPEC: IdentityMemo[Mapping[str, Any], PodQoS] = IdentityMemo(SPECS_REMEMBERED)
# repr of the resources, without the names -> (the names it was computed with, the class)
_BY_RESOURCES: BoundedCache[str, tuple[tuple[str, ...], PodQoS]] = BoundedCache(SPECS_REMEMBERED)


def memo_pod_qos(spec: Mapping[str, Any]) -> PodQoS:
    """`pod_qos(spec)`, computed once per distinct set of what it reads."""
    return _BY_SPEC.get_or_make(spec, _by_resources)


def clear() -> None:
    _BY_SPEC.clear()
    _BY_RESOURCES.clear()


def _by_resources(spec: Mapping[str, Any]) -> PodQoS:
    names, key = _names(spec), _resources_key(spec)
    seen = _BY_RESOURCES.get(key)
    if seen is not None:
        old_names, qos = seen
        if names == old_names:
            return qos
        if len(set(old_names)) == len(old_names):  # each old name stands for one container
            return _renamed(qos, dict(zip(old_names, names, strict=True)))
    qos = pod_qos(spec)
    _BY_RESOURCES.put(key, (names, qos))
    return qos


def _names(spec: Mapping[str, Any]) -> tuple[str, ...]:
    """The container names `read_pod` gives, in its order: app containers, then init containers."""
    return tuple(
        str(c.get("name", "?")) if isinstance(c, dict) else "?"
        for key in ("containers", "initContainers")
        for c in _list(spec.get(key))
    )


def _resources_key(spec: Mapping[str, Any]) -> str:
    """Everything else `read_pod` reads, exactly: whether each container is one (a mapping), whether
    an init container restarts (a sidecar), its requests and limits; and the pod-level requests and
    limits. repr() tells apart what YAML can load (1, "1", 1.0, True), and it is taken only of what
    `read_pod` itself turns into text, so it walks nothing the classification would not."""
    return repr(
        (
            _containers_key(spec.get("containers")),
            _containers_key(spec.get("initContainers")),
            _requirements_key(spec),
        )
    )


def _containers_key(node: Any) -> tuple[Any, ...]:
    return tuple(
        [
            (c.get("restartPolicy") == "Always", _requirements_key(c))
            if isinstance(c, dict)
            else None
            for c in _list(node)
        ]
    )


def _requirements_key(owner: Mapping[str, Any]) -> tuple[Any, Any] | None:
    node = owner.get("resources")
    return (node.get("requests"), node.get("limits")) if isinstance(node, dict) else None


def _list(node: Any) -> list[Any]:
    return node if isinstance(node, list) else []


def _renamed(qos: PodQoS, name_of: Mapping[str, str]) -> PodQoS:
    """`qos` with each container's name replaced (pod-level causes and quantities name none)."""
    resources = qos.resources
    bad = tuple(
        BadQuantity(b.role, name_of[b.container], b.field, b.value, b.reason)
        if b.container is not None
        else b
        for b in resources.bad
    )
    causes = tuple(
        Cause(c.role, name_of[c.container], c.problem, c.fields) if c.container is not None else c
        for c in qos.causes
    )
    containers = tuple(
        Container(name_of[c.name], c.role, c.resources) for c in resources.containers
    )
    return PodQoS(qos.qos_class, causes, bad, PodResources(containers, resources.pod, bad))
