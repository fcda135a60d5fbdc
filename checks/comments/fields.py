"""What a PR changed in a rendered workload, field by field, for the fields a comment is likely to
explain: a probe's handler and port, a container port, the UID and GID a pod runs as, a resources
value, the update strategy. Each change is its old and new value as a token a comment could name
(`tcpSocket`, `8080`, `Recreate`, `512Mi`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.model.manifests import Document
from checks.kit.containers import Container, containers, mapping, render_workloads

PROBES = {"livenessProbe": "liveness", "readinessProbe": "readiness", "startupProbe": "startup"}
HANDLERS = ("httpGet", "tcpSocket", "grpc", "exec")
IDENTITY = ("runAsUser", "runAsGroup", "fsGroup")
RESOURCES = tuple((side, dim) for side in ("requests", "limits") for dim in ("cpu", "memory"))
# The update strategy's type, by where each kind keeps it.
STRATEGY = {
    "Deployment": "strategy",
    "StatefulSet": "updateStrategy",
    "DaemonSet": "updateStrategy",
}


@dataclass(frozen=True)
class FieldChange:
    """One field of one workload, changed by the PR. `keys` lead from the container (or, with no
    container, from the workload's top) to the field as the template writes it; a handler's
    change is keyed by the new handler, the line that now stands where the old one did."""

    subject: str  # Kind/namespace/name
    template: str
    container: Container | None
    keys: tuple[str, ...]
    what: str  # for people: "liveness probe handler", "containerPort http"
    old: str
    new: str
    handler: bool = False  # the value is a key name (tcpSocket), not a number or a word


def changes(base: tuple[Document, ...], head: tuple[Document, ...]) -> Iterator[FieldChange]:
    """Every watched field that differs between the two renders, workload by workload."""
    before = {doc.key: (doc, spec) for doc, spec in render_workloads(base)}
    for doc, spec in render_workloads(head):
        old = before.get(doc.key)
        if old is None or old[0].template != doc.template or old[0].body is doc.body:
            continue  # one object at both sides: the same text parsed once, nothing changed
        yield from _workload(doc, old[0], old[1], spec)


def _workload(
    doc: Document, old_doc: Document, old_spec: Mapping[str, Any], spec: Mapping[str, Any]
) -> Iterator[FieldChange]:
    top = STRATEGY.get(doc.kind)
    if top is not None:
        old, new = (
            _scalar(mapping(old_doc.body, "spec", top), "type"),
            _scalar(mapping(doc.body, "spec", top), "type"),
        )
        yield from _change(doc, None, ("spec", top, "type"), f"{top} type", old, new)
    pod = ("spec", "template", "spec") if doc.kind != "Pod" else ("spec",)
    for key in IDENTITY:
        old, new = (_scalar(mapping(s, "securityContext"), key) for s in (old_spec, spec))
        yield from _change(doc, None, (*pod, "securityContext", key), f"pod {key}", old, new)
    previous = {(c.role, c.name): c for c in containers(old_spec)}
    for container in containers(spec):
        was = previous.get((container.role, container.name))
        if was is not None and was.body is not container.body:
            yield from _container(doc, was, container)


def _container(doc: Document, was: Container, now: Container) -> Iterator[FieldChange]:
    old, new = was.body, now.body
    for field, kind in PROBES.items():
        yield from _probe(doc, now, field, kind, mapping(old, field), mapping(new, field))
    old_ports, new_ports = _ports(old), _ports(new)
    for name, port in new_ports.items():
        what = f"containerPort {name}" if isinstance(name, str) else "containerPort"
        yield from _change(doc, now, ("ports", "containerPort"), what, old_ports.get(name), port)
    for key in IDENTITY[:2]:
        before, after = (_scalar(mapping(b, "securityContext"), key) for b in (old, new))
        yield from _change(doc, now, ("securityContext", key), key, before, after)
    for side, dim in RESOURCES:
        before, after = (_scalar(mapping(b, "resources", side), dim) for b in (old, new))
        yield from _change(doc, now, ("resources", side, dim), f"{dim} {side}", before, after)


def _probe(
    doc: Document,
    container: Container,
    field: str,
    kind: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
) -> Iterator[FieldChange]:
    was, now = _handler(old), _handler(new)
    if was is None or now is None:
        return
    if was != now:
        what = f"{kind} probe handler"
        yield FieldChange(doc.key, doc.template, container, (field, now), what, was, now, True)
        return
    before, after = _scalar(mapping(old, was), "port"), _scalar(mapping(new, now), "port")
    yield from _change(doc, container, (field, now, "port"), f"{kind} probe port", before, after)


def _handler(probe: Mapping[str, Any]) -> str | None:
    return next((h for h in HANDLERS if isinstance(probe.get(h), dict)), None)


def _ports(body: Mapping[str, Any]) -> dict[str | int, str]:
    """containerPort by the port's name, else by its place in the list."""
    ports = body.get("ports")
    found: dict[str | int, str] = {}
    for index, port in enumerate(ports if isinstance(ports, list) else ()):
        if isinstance(port, dict) and (number := _scalar(port, "containerPort")) is not None:
            name = port.get("name")
            found[name if isinstance(name, str) else index] = number
    return found


def _scalar(node: Mapping[str, Any], key: str) -> str | None:
    """A value as a comment would write it; None for one absent, a bool or a structure."""
    value = node.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    text = str(value).strip()
    return text or None


def _change(
    doc: Document,
    container: Container | None,
    keys: tuple[str, ...],
    what: str,
    old: str | None,
    new: str | None,
) -> Iterator[FieldChange]:
    if old is not None and new is not None and old != new:
        yield FieldChange(doc.key, doc.template, container, keys, what, old, new)
