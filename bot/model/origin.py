"""A finding's rendered field, named so that it can be found again in another render of the same
chart: the object (by key, else by its template and kind), then a path from its pod spec.

Provenance (bot/engine/provenance.py) reads the field in a render whose values carry markers; a
marker can rename the object (a changed `fullnameOverride`) or a container, so containers are named
by their place in their list, not by name, and an object renamed is found by its template."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.model.manifests import Document, pod_spec
from bot.model.report import Origin

# What a field path steps through that is not there (a marker took the render down another branch).
MISSING = object()


def container_origin(
    doc: Document,
    spec: Mapping[str, Any],
    container: Mapping[str, Any] | str | None,
    line: int | None,
    *field: str,
) -> Origin:
    """The origin of `field` (keys under the container: `resources`, `livenessProbe`, `httpGet`,
    `port`) of one container of `doc`'s pod spec `spec`, given as its body or its name; without
    one, `field` under the pod spec itself (pod-level `resources`)."""
    return Origin(doc.template, line, doc.key, (*_container_path(spec, container), *field))


def _container_path(spec: Mapping[str, Any], container: Mapping[str, Any] | str | None) -> tuple:
    if container is None:
        return ()
    for key in ("initContainers", "containers"):
        items = spec.get(key)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if item is container or (isinstance(item, dict) and item.get("name") == container):
                return (key, index)
    return ()


def find_document(docs: Sequence[Document], origin: Origin) -> Document | None:
    """The object the origin names in `docs`: by its key, else the one object of the same kind its
    template renders."""
    kind = origin.subject.split("/", 1)[0]
    same = [d for d in docs if d.key == origin.subject and d.template == origin.path]
    if same:
        return same[0]
    renamed = [d for d in docs if d.template == origin.path and d.kind == kind]
    return renamed[0] if len(renamed) == 1 else None


def field_value(docs: Sequence[Document], origin: Origin) -> Any:
    """The rendered value at the origin's field in `docs`, or MISSING."""
    doc = find_document(docs, origin)
    node: Any = pod_spec(doc) if doc is not None else None
    if node is None or not origin.field:
        return MISSING
    for step in origin.field:
        if isinstance(step, int):
            if not isinstance(node, list) or not 0 <= step < len(node):
                return MISSING
        elif not isinstance(node, dict) or step not in node:
            return MISSING
        node = node[step]
    return node
