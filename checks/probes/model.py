"""Probes and ports of one rendered container, as the kubelet reads them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from checks.kit.containers import Container, mapping

# The probe fields of a container, and the short names config and messages use.
PROBE_FIELDS = {
    "readinessProbe": "readiness",
    "livenessProbe": "liveness",
    "startupProbe": "startup",
}
PORT_HANDLERS = ("httpGet", "tcpSocket", "grpc")
OTHER_HANDLERS = ("exec",)
HANDLERS = PORT_HANDLERS + OTHER_HANDLERS
# An env var that configures a port the app listens on: a name ending in _PORT, a numeric value.
ENV_PORT = re.compile(r"^[A-Z0-9_]*_PORT$")
# ... unless a sibling names the host it belongs to (MYSQL_HOST + MYSQL_PORT: a server to call).
REMOTE_SUFFIXES = ("_HOST", "_HOSTNAME", "_ADDR", "_ADDRESS", "_SERVICE", "_URL")


class Probe(NamedTuple):
    field: str  # readinessProbe
    kind: str  # readiness
    handler: str | None  # httpGet, tcpSocket, grpc, exec; None when the probe names none
    port: int | str | None  # a number, or the name of a containerPort
    path: str | None
    timeout: Any


class Ports(NamedTuple):
    numbers: frozenset[int]
    names: Mapping[str, int | None]

    def resolve(self, port: int | str | None) -> int | None:
        """The number a probe's port means here, or None when it cannot be resolved."""
        if isinstance(port, int):
            return port
        return self.names.get(port) if isinstance(port, str) else None

    def declares(self, port: int | str | None) -> bool:
        """Whether the port matches a containerPort. A number on a container that declares none
        counts as matched: containerPort is informational, and nothing says the app does not
        listen there."""
        if isinstance(port, int):
            return not self.numbers or port in self.numbers
        return isinstance(port, str) and port in self.names

    def describe(self) -> str:
        named = {n: name for name, n in self.names.items() if n is not None}
        parts = [f"{n} ({named[n]})" if n in named else str(n) for n in sorted(self.numbers)]
        return ", ".join(parts) or "none"


class ContainerFacts(NamedTuple):
    """What the probes check reads of one container."""

    probes: tuple[Probe, ...]
    ports: Ports
    env_ports: Mapping[str, int]


def facts(container: Mapping[str, Any]) -> ContainerFacts:
    """The probes, ports and port variables of a container's body."""
    return ContainerFacts(tuple(_probes(container)), _ports(container), _env_ports(container))


def probes(container: Container) -> list[Probe]:
    return _probes(container.body)


def ports(container: Container) -> Ports:
    return _ports(container.body)


def env_ports(container: Container) -> dict[str, int]:
    """The container's `*_PORT` variables with numeric values, without those paired with a host."""
    return _env_ports(container.body)


def _probes(container: Mapping[str, Any]) -> list[Probe]:
    found = []
    for field, kind in PROBE_FIELDS.items():
        body = container.get(field)
        if not isinstance(body, dict):
            continue
        handler = next((h for h in HANDLERS if h in body), None)
        action = mapping(body, handler) if handler else {}
        found.append(
            Probe(
                field,
                kind,
                handler,
                _port(action.get("port")),
                action.get("path") if handler == "httpGet" else None,
                body.get("timeoutSeconds"),
            )
        )
    return found


def _ports(container: Mapping[str, Any]) -> Ports:
    numbers: set[int] = set()
    names: dict[str, int | None] = {}
    for entry in container.get("ports") or ():
        if not isinstance(entry, dict):
            continue
        number = _port(entry.get("containerPort"))
        if isinstance(number, int):
            numbers.add(number)
        if isinstance(entry.get("name"), str):
            names[entry["name"]] = number if isinstance(number, int) else None
    return Ports(frozenset(numbers), names)


def _env_ports(container: Mapping[str, Any]) -> dict[str, int]:
    env = {
        e["name"]: e.get("value")
        for e in container.get("env") or ()
        if isinstance(e, dict) and isinstance(e.get("name"), str)
    }
    found = {}
    for name, value in env.items():
        number = _port(value)
        if not ENV_PORT.match(name) or not isinstance(number, int):
            continue
        stem = name[: -len("_PORT")]
        if not any(f"{stem}{suffix}" in env for suffix in REMOTE_SUFFIXES):
            found[name] = number
    return found


def _port(value: Any) -> int | str | None:
    """IntOrString as the API reads it; a string of digits is the number it spells."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.isdigit() else (text or None)
    return None
