"""The containers of a rendered pod spec, with their role, as the three checks of issue #9 read them.

(Kept here rather than in `bot/manifests.py`, which another change is reworking; it belongs there.)

Every check walks every render's workloads, and renders repeat themselves: a render's workloads and
containers are found once for all the checks, and a list of containers once however many renders
share it (identical YAML parses to the very same list, see bot/yamlblocks.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

from bot.lru import IdentityMemo
from bot.manifests import Document, workloads

ROLE_CONTAINER = "container"
ROLE_INIT = "init container"
# Renders are remembered for a review and a few more; container lists for many reviews.
RENDERS_REMEMBERED = 64
LISTS_REMEMBERED = 4096


class Container(NamedTuple):
    role: str
    name: str
    body: Mapping[str, Any]

    @property
    def who(self) -> str:
        return f"{self.role} {self.name}"


Workload = tuple[Document, Mapping[str, Any]]
PodContainer = tuple[Document, Mapping[str, Any], Container]
Docs = tuple[Document, ...]


def _named(entries: list[Any], role: str) -> tuple[Container, ...]:
    return tuple(
        Container(role, entry["name"], entry)
        for entry in entries
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    )


# Ephemeral containers are added by `kubectl debug`, never rendered by a chart.
_LISTS: tuple[tuple[str, Callable[[list[Any]], tuple[Container, ...]]], ...] = (
    ("initContainers", partial(_named, role=ROLE_INIT)),
    ("containers", partial(_named, role=ROLE_CONTAINER)),
)
_BY_LIST: dict[str, IdentityMemo[list[Any], tuple[Container, ...]]] = {
    key: IdentityMemo(LISTS_REMEMBERED) for key, _ in _LISTS
}
_WORKLOADS: IdentityMemo[Docs, tuple[Workload, ...]] = IdentityMemo(RENDERS_REMEMBERED)
_CONTAINERS: IdentityMemo[Docs, tuple[PodContainer, ...]] = IdentityMemo(RENDERS_REMEMBERED)


def containers(spec: Mapping[str, Any]) -> list[Container]:
    """Init containers first, then the app containers; entries without a name are skipped."""
    found: list[Container] = []
    for key, named in _LISTS:
        entries = spec.get(key)
        if isinstance(entries, list):
            found += _BY_LIST[key].get_or_make(entries, named)
    return found


def render_workloads(docs: Docs) -> tuple[Workload, ...]:
    """`workloads(docs)` of a render, found once."""
    return _WORKLOADS.get_or_make(docs, lambda d: tuple(workloads(d)))


def pod_containers(docs: Docs) -> tuple[PodContainer, ...]:
    """Every container of every workload: (workload document, its pod spec, the container)."""
    return _CONTAINERS.get_or_make(docs, _pod_containers)


def _pod_containers(docs: Docs) -> tuple[PodContainer, ...]:
    return tuple((d, s, c) for d, s in render_workloads(docs) for c in containers(s))


def mapping(node: Any, *keys: str) -> Mapping[str, Any]:
    """The mapping at `keys` under `node`, or an empty one: rendered YAML may hold anything."""
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}
