"""The containers of a rendered pod spec, with their role, as the checks read them.

A render's workloads and containers are found once, by the engine as it parses the render
(`pod_templates` in bot/model/manifests.py); these are the checks' names for them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.model.manifests import (
    ROLE_CONTAINER,
    ROLE_INIT,
    Container,
    Document,
    PodContainer,
    Workload,
    containers,
    pod_templates,
)

__all__ = [
    "LIST_KEYS",
    "Container",
    "PodContainer",
    "Workload",
    "containers",
    "mapping",
    "pod_containers",
    "render_workloads",
]

Docs = tuple[Document, ...]

# The pod spec key each container role is listed under (the engine reads the same two lists).
LIST_KEYS = {ROLE_INIT: "initContainers", ROLE_CONTAINER: "containers"}


def render_workloads(docs: Docs) -> tuple[Workload, ...]:
    """`workloads(docs)` of a render, found once."""
    return pod_templates(docs).workloads


def pod_containers(docs: Docs) -> tuple[PodContainer, ...]:
    """Every container of every workload: (workload document, its pod spec, the container)."""
    return pod_templates(docs).containers


def mapping(node: Any, *keys: str) -> Mapping[str, Any]:
    """The mapping at `keys` under `node`, or an empty one: rendered YAML may hold anything."""
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}
