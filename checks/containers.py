"""The containers of a rendered pod spec, with their role, as the three checks of issue #9 read them.

(Kept here rather than in `bot/manifests.py`, which another change is reworking; it belongs there.)"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from bot.manifests import Document, workloads

ROLE_CONTAINER = "container"
ROLE_INIT = "init container"
# Ephemeral containers are added by `kubectl debug`, never rendered by a chart.
_LISTS = (("initContainers", ROLE_INIT), ("containers", ROLE_CONTAINER))


class Container(NamedTuple):
    role: str
    name: str
    body: Mapping[str, Any]

    @property
    def who(self) -> str:
        return f"{self.role} {self.name}"


def containers(spec: Mapping[str, Any]) -> list[Container]:
    """Init containers first, then the app containers; entries without a name are skipped."""
    found = []
    for key, role in _LISTS:
        entries = spec.get(key)
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                found.append(Container(role, entry["name"], entry))
    return found


def pod_containers(
    docs: tuple[Document, ...],
) -> Iterator[tuple[Document, Mapping[str, Any], Container]]:
    """Every container of every workload: (workload document, its pod spec, the container)."""
    for doc, spec in workloads(docs):
        for container in containers(spec):
            yield doc, spec, container


def mapping(node: Any, *keys: str) -> Mapping[str, Any]:
    """The mapping at `keys` under `node`, or an empty one: rendered YAML may hold anything."""
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}
