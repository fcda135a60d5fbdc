"""Pods of a render keyed `Kind/namespace/name`, and what changed between two renders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.lru import BoundedCache
from bot.manifests import Document, workloads
from checks.qos_class import PodQoS, QoSClass, pod_qos

# Profiles and sides mostly repeat the same pods: a class is computed once per distinct resources
# (by `_resources_key`), and a render's pods once per render (the check and its JSON data both ask).
# Identical rendered text parses to the very same objects, so a spec seen before is found by id
# first; the entry holds the spec, so its id cannot be reused while remembered.
_BY_SPEC: BoundedCache[int, tuple[Mapping[str, Any], PodQoS]] = BoundedCache(4096)
_BY_RESOURCES: BoundedCache[str, PodQoS] = BoundedCache(4096)
_BY_RENDER: BoundedCache[int, tuple[tuple[Document, ...], dict[str, PodView]]] = BoundedCache(64)


@dataclass(frozen=True)
class PodView:
    """One workload's pod template at one side, with its class."""

    doc: Document
    qos: PodQoS

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def qos_class(self) -> QoSClass:
        return self.qos.qos_class

    @property
    def signature(self) -> tuple[str, frozenset[str]]:
        """What survives a rename: the kind and the names of its containers (init and app)."""
        return self.doc.kind, frozenset(c.name for c in self.qos.resources.containers)


class ChangeKind(StrEnum):
    CHANGED = "changed"
    ADDED = "added"
    REMOVED = "removed"
    RENAMED = "renamed"


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    base: PodView | None
    head: PodView | None

    @property
    def key(self) -> str:
        view = self.head or self.base
        assert view is not None
        return view.key


def pods(docs: Iterable[Document]) -> dict[str, PodView]:
    """Every pod-carrying workload of a render, by key (the last wins if a render repeats a key)."""
    docs = tuple(docs)
    # Keyed by identity, so the entry holds the tuple: its id cannot be reused while remembered.
    hit = _BY_RENDER.get(id(docs))
    if hit is None or hit[0] is not docs:
        hit = docs, {doc.key: PodView(doc, memo_pod_qos(spec)) for doc, spec in workloads(docs)}
        _BY_RENDER.put(id(docs), hit)
    return dict(hit[1])


def memo_pod_qos(spec: Mapping[str, Any]) -> PodQoS:
    """`pod_qos(spec)`, computed once per distinct set of what it reads."""
    seen = _BY_SPEC.get(id(spec))
    if seen is not None and seen[0] is spec:
        return seen[1]
    qos = _BY_RESOURCES.get_or_make(_resources_key(spec), lambda: pod_qos(spec))
    _BY_SPEC.put(id(spec), (spec, qos))
    return qos


def _resources_key(spec: Mapping[str, Any]) -> str:
    """Everything `read_pod` reads, exactly: each container's name, whether an init container
    restarts (a sidecar), its requests and limits; and the pod-level requests and limits. repr()
    tells apart what YAML can load (1, "1", 1.0, True), and it is taken only of what `read_pod`
    itself turns into text, so it walks nothing the classification would not."""
    return repr(
        (
            _containers_key(spec.get("containers")),
            _containers_key(spec.get("initContainers")),
            _requirements_key(spec),
        )
    )


def _containers_key(node: Any) -> tuple[Any, ...]:
    if not isinstance(node, list):
        return ()
    return tuple(
        [
            (c.get("name", "?"), c.get("restartPolicy") == "Always", _requirements_key(c))
            if isinstance(c, dict)
            else None
            for c in node
        ]
    )


def _requirements_key(owner: Mapping[str, Any]) -> tuple[Any, Any] | None:
    node = owner.get("resources")
    return (node.get("requests"), node.get("limits")) if isinstance(node, dict) else None


def classify(docs: Iterable[Document]) -> dict[str, str]:
    """Each pod's QoS class by key: the whole computation, for benchmarks and the CLI."""
    return {key: str(view.qos_class) for key, view in pods(docs).items()}


def changes(base: Mapping[str, PodView], head: Mapping[str, PodView]) -> list[Change]:
    """Pods whose class differs, pods added or removed, and renames (one gone, one new, same
    signature) paired into one change. A pod whose class is unchanged is no change."""
    found = [
        Change(ChangeKind.CHANGED, base[key], head[key])
        for key in sorted(base.keys() & head.keys())
        if base[key].qos_class is not head[key].qos_class
    ]
    removed = [base[k] for k in sorted(base.keys() - head.keys())]
    added = [head[k] for k in sorted(head.keys() - base.keys())]
    for old in list(removed):
        new = _rename_of(old, added)
        twins = sum(view.signature == old.signature for view in removed)
        if new is not None and twins == 1:
            removed.remove(old)
            added.remove(new)
            found.append(Change(ChangeKind.RENAMED, old, new))
    found += [Change(ChangeKind.REMOVED, view, None) for view in removed]
    found += [Change(ChangeKind.ADDED, None, view) for view in added]
    return found


def _rename_of(old: PodView, added: list[PodView]) -> PodView | None:
    # Only an unambiguous match is a rename: two candidates could be a rename and an addition
    # in either order, and saying which would be a guess.
    candidates = [view for view in added if view.signature == old.signature]
    return candidates[0] if len(candidates) == 1 else None


def clear_memo() -> None:
    """Forget computed classes (benchmarks measure a cold review)."""
    _BY_SPEC.clear()
    _BY_RESOURCES.clear()
    _BY_RENDER.clear()
