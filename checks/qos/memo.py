"""`pod_qos`, computed once per distinct resources, whatever the containers are called.

Profiles and sides repeat the same pods, and a chart's workloads mostly share one resources block
(`toYaml .Values.resources`) under different container names. So a spec seen before is found by
identity (identical rendered text parses to the very same objects); else its resources are looked
up without the names (by the identity of its `resources` mappings, which the parse shares between
workloads too, else by their value). What that finds was computed for other names, maybe: its class
is this spec's (the class and every cause depend on the resources and roles alone), and only when a
finding needs them are its causes given this spec's names, container by container."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.lru import BoundedCache, IdentityMemo
from checks.qos.classes import Cause, PodQoS, pod_qos
from checks.qos.pod import BadQuantity, Container, PodResources

SPECS_REMEMBERED = (
    2048  # each entry keeps its pod spec alive (checks/selectors/objects.py says why)
)

Named = tuple[tuple[str, ...], PodQoS]  # a class and the container names it was computed with

_BY_SPEC: IdentityMemo[Mapping[str, Any], PodQoS] = IdentityMemo(SPECS_REMEMBERED)
_COMPUTED: IdentityMemo[Mapping[str, Any], Named] = IdentityMemo(SPECS_REMEMBERED)
# the ids of what `read_pod` reads -> (those objects, held so no other can take their ids; the class)
_BY_ANCHORS: BoundedCache[tuple[Any, ...], tuple[tuple[Any, ...], Named]] = BoundedCache(
    SPECS_REMEMBERED
)
# repr of the resources, without the names -> the class
_BY_RESOURCES: BoundedCache[str, Named] = BoundedCache(SPECS_REMEMBERED)


def memo_pod_qos(spec: Mapping[str, Any]) -> PodQoS:
    """`pod_qos(spec)`, computed once per distinct set of what it reads."""
    return _BY_SPEC.get_or_make(spec, _named)


def computed_qos(spec: Mapping[str, Any]) -> PodQoS:
    """`pod_qos` of a spec with the same resources and roles, maybe under other container names:
    its class, and whether it has causes or bad quantities, are this spec's; their container names
    may not be (`memo_pod_qos` gives those). A class needs no renaming: most pods need no more."""
    return _COMPUTED.get_or_make(spec, _by_resources)[1]


def clear() -> None:
    for memo in (_BY_SPEC, _COMPUTED, _BY_ANCHORS, _BY_RESOURCES):
        memo.clear()


def _named(spec: Mapping[str, Any]) -> PodQoS:
    names = _names(spec)
    old_names, qos = _COMPUTED.get_or_make(spec, _by_resources)
    if names == old_names:
        return qos
    if len(set(old_names)) == len(old_names):  # each old name stands for one container
        return _renamed(qos, dict(zip(old_names, names, strict=True)))
    return pod_qos(spec)


def _by_resources(spec: Mapping[str, Any]) -> Named:
    """A class computed from these very resources objects, else from equal ones, else now."""
    anchors = _anchors(spec)
    ids = tuple(map(id, anchors))
    hit = _BY_ANCHORS.get(ids)
    if hit is not None and all(a is b for a, b in zip(hit[0], anchors, strict=True)):
        return hit[1]
    key = _resources_key(spec)
    named = _BY_RESOURCES.get(key)
    if named is None:
        named = (_names(spec), pod_qos(spec))
        _BY_RESOURCES.put(key, named)
    _BY_ANCHORS.put(ids, (anchors, named))
    return named


def _anchors(spec: Mapping[str, Any]) -> tuple[Any, ...]:
    """Everything `read_pod` reads, as the objects themselves: each container (a mapping or not),
    whether it restarts, and its `resources`; a marker between app and init containers; and the
    pod-level `resources`. Parsed YAML is read-only, so the same objects hold the same values."""
    parts: list[Any] = []
    for key in ("containers", "initContainers"):
        for c in _list(spec.get(key)):
            if isinstance(c, dict):
                parts += (c.get("restartPolicy") == "Always", c.get("resources"))
            else:
                parts += (_NOT_A_CONTAINER, c)
        parts.append(_END)
    parts.append(spec.get("resources"))
    return tuple(parts)


# Markers in `_anchors`, objects no parse can give.
_NOT_A_CONTAINER = object()
_END = object()


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
