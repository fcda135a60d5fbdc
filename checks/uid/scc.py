"""OpenShift SecurityContextConstraints as admission reads their `runAsUser`: which UIDs each admits,
and the order admission tries them in.

Only the runAsUser strategy is modelled: it is what decides whether a pinned UID is admitted. An SCC
whose strategy needs the namespace's UID range (MustRunAsRange without a range, as restricted-v2 is)
cannot be judged from the chart: the range is assigned when the namespace is created."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.model.manifests import Document

SCC_KIND = "SecurityContextConstraints"
# What every authenticated service account may use on OpenShift 4.11+ when nothing else admits it.
RESTRICTED = "restricted-v2"

RUN_AS_ANY = "RunAsAny"
NON_ROOT = "MustRunAsNonRoot"
MUST_RUN_AS = "MustRunAs"
MUST_RUN_AS_RANGE = "MustRunAsRange"
# Among SCCs of equal priority admission tries the most restrictive first (OpenShift's SCC sort).
_RESTRICTIVENESS = {MUST_RUN_AS: 0, MUST_RUN_AS_RANGE: 1, NON_ROOT: 2, RUN_AS_ANY: 3}
ROOT = 0


@dataclass(frozen=True)
class UidStrategy:
    """An SCC's `runAsUser`: its type, its fixed `uid`, its `uidRangeMin..uidRangeMax`."""

    type: str
    uid: int | None = None
    low: int | None = None
    high: int | None = None

    def admits(self, uid: object) -> bool:
        if self.type == RUN_AS_ANY:
            return True
        if not isinstance(uid, int) or isinstance(uid, bool):
            return False  # not a UID the API server would take
        if self.type == NON_ROOT:
            return uid != ROOT
        if self.type == MUST_RUN_AS and self.uid is not None:
            return uid == self.uid
        if self.type in (MUST_RUN_AS, MUST_RUN_AS_RANGE) and self.low is not None:
            return self.low <= uid <= (self.high if self.high is not None else self.low)
        return False  # the namespace's range applies, which the chart cannot know

    def describe(self) -> str:
        if self.type == RUN_AS_ANY:
            return "admits any UID"
        if self.type == NON_ROOT:
            return "admits any UID but 0"
        if self.type == MUST_RUN_AS and self.uid is not None:
            return f"admits only UID {self.uid}"
        if self.type in (MUST_RUN_AS, MUST_RUN_AS_RANGE) and self.low is not None:
            return f"admits only UIDs {self.low}-{self.high if self.high is not None else self.low}"
        if self.type in (MUST_RUN_AS, MUST_RUN_AS_RANGE):
            return "admits only the namespace's assigned range"
        return f"has runAsUser type {self.type or '(none)'}, which admits no pinned UID"


@dataclass(frozen=True)
class Scc:
    """One SCC: who it names directly (`users`, `groups`) and its runAsUser strategy."""

    name: str
    run_as_user: UidStrategy
    priority: int = 0
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @property
    def order(self) -> tuple[int, int, str]:
        """Admission's order: higher priority first, then more restrictive, then by name."""
        return (-self.priority, _RESTRICTIVENESS.get(self.run_as_user.type, -1), self.name)


# The SCCs every OpenShift 4 cluster ships that a chart may grant (a Role naming one in
# resourceNames, or a binding to its `system:openshift:scc:<name>` ClusterRole).
BUILTIN = {
    scc.name: scc
    for scc in (
        Scc("anyuid", UidStrategy(RUN_AS_ANY), priority=10),
        Scc("privileged", UidStrategy(RUN_AS_ANY)),
        Scc("hostmount-anyuid", UidStrategy(RUN_AS_ANY)),
        Scc("nonroot", UidStrategy(NON_ROOT)),
        Scc("nonroot-v2", UidStrategy(NON_ROOT)),
        Scc("restricted", UidStrategy(MUST_RUN_AS_RANGE)),
        Scc(RESTRICTED, UidStrategy(MUST_RUN_AS_RANGE)),
    )
}
BUILTIN_ROLE_PREFIX = "system:openshift:scc:"


def rendered_sccs(docs: tuple[Document, ...]) -> tuple[Scc, ...]:
    """The SCCs a render holds, in admission order."""
    found = (_scc(doc) for doc in docs if doc.kind == SCC_KIND)
    return tuple(sorted(found, key=lambda scc: scc.order))


def _scc(doc: Document) -> Scc:
    body = doc.body
    return Scc(
        name=doc.name,
        run_as_user=_strategy(body.get("runAsUser")),
        priority=_int(body.get("priority")) or 0,
        users=string_set(body.get("users")),
        groups=string_set(body.get("groups")),
    )


def _strategy(node: Any) -> UidStrategy:
    node = node if isinstance(node, Mapping) else {}
    kind = node.get("type")
    return UidStrategy(
        type=kind if isinstance(kind, str) else "",
        uid=_int(node.get("uid")),
        low=_int(node.get("uidRangeMin")),
        high=_int(node.get("uidRangeMax")),
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def string_set(value: Any) -> frozenset[str]:
    """The strings of a rendered list; empty for anything else."""
    return (
        frozenset(v for v in value if isinstance(v, str))
        if isinstance(value, list)
        else frozenset()
    )
