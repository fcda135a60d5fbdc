"""Pods of a render keyed `Kind/namespace/name`, and what changed between two renders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

from bot.lru import IdentityMemo
from bot.model.manifests import Document
from bot.model.random_names import named_at_random
from checks.kit.containers import render_workloads
from checks.qos import memo as qos_memo
from checks.qos.classes import PodQoS, QoSClass
from checks.qos.memo import computed_qos, memo_pod_qos
from checks.qos.pod import BadQuantity

# A render's pods are found once per render (the check and its JSON data both ask), each pod's class
# once per distinct resources (checks/qos/memo.py).
_BY_RENDER: IdentityMemo[tuple[Document, ...], dict[str, PodView]] = IdentityMemo(64)


class PodView(NamedTuple):
    """One workload's pod template at one side, with its class. A NamedTuple: a review makes one
    per pod per render, and a frozen dataclass's __init__ cost more than finding the class."""

    doc: Document
    spec: Mapping[str, Any]
    # Computed for the same resources, maybe under other names: see qos_memo.computed_qos.
    computed: PodQoS

    @property
    def key(self) -> str:
        return self.doc.key

    @property
    def qos_class(self) -> QoSClass:
        return self.computed.qos_class

    @property
    def qos(self) -> PodQoS:
        """The class with its causes and bad quantities naming this pod's containers."""
        return memo_pod_qos(self.spec)

    @property
    def bad_quantities(self) -> tuple[BadQuantity, ...]:
        return self.qos.bad_quantities if self.computed.bad_quantities else ()

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


def pods(docs: Iterable[Document]) -> Mapping[str, PodView]:
    """Every pod-carrying workload of a render, by key (the last wins if a render repeats a key).
    Remembered per render, so read-only."""
    return _BY_RENDER.get_or_make(docs if isinstance(docs, tuple) else tuple(docs), _pod_views)


def _pod_views(docs: tuple[Document, ...]) -> dict[str, PodView]:
    return {doc.key: PodView(doc, spec, computed_qos(spec)) for doc, spec in render_workloads(docs)}


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
        if new is None or twins != 1:
            new = _renamed_in_place(old, added)
        if new is not None:
            removed.remove(old)
            added.remove(new)
            # The same pod under a name each render draws anew: its class kept, nothing changed.
            if old.qos_class is not new.qos_class or not named_at_random(old.doc, new.doc):
                found.append(Change(ChangeKind.RENAMED, old, new))
    found += [Change(ChangeKind.REMOVED, view, None) for view in removed]
    found += [Change(ChangeKind.ADDED, None, view) for view in added]
    return found


def _rename_of(old: PodView, added: list[PodView]) -> PodView | None:
    # Only an unambiguous match is a rename: two candidates could be a rename and an addition
    # in either order, and saying which would be a guess.
    candidates = [view for view in added if view.signature == old.signature]
    return candidates[0] if len(candidates) == 1 else None


def _renamed_in_place(old: PodView, added: list[PodView]) -> PodView | None:
    """Where the signature alone is ambiguous (two test pods of one template, each with one
    `wget` container): the pod of the same template whose name holds the old one, or is held by
    it (`-metrics` → `-metrics-test`), if exactly one does."""
    candidates = [
        view
        for view in added
        if view.signature == old.signature
        and view.doc.template == old.doc.template
        and (old.doc.name in view.doc.name or view.doc.name in old.doc.name)
    ]
    return candidates[0] if len(candidates) == 1 else None


def clear_memo() -> None:
    """Forget computed classes (benchmarks measure a cold review)."""
    qos_memo.clear()
    _BY_RENDER.clear()
