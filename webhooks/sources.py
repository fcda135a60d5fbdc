"""Whom a request is counted to: the connection's peer, or, when the peer is a trusted proxy
(WEBHOOK_TRUSTED_PROXIES, such as the chart's Ingress controller), the client that proxy names.

Behind a proxy every connection comes from the proxy, so without this each delivery, GitHub's and
an attacker's alike, would be one source sharing one source's caps. `X-Forwarded-For` is read from
the right: each proxy appends the address it was reached from, so the last address that is not a
trusted proxy is the one the nearest trusted proxy saw, and what a client wrote before it is
never believed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.types import Scope

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

FORWARDED_FOR = b"x-forwarded-for"
UNKNOWN = "unknown"  # a peer the server could not name (a Unix socket)


def source_of(scope: Scope, trusted: Sequence[Network]) -> str:
    client = scope.get("client")
    peer = str(client[0]) if client else UNKNOWN
    if not trusted or not is_trusted(peer, trusted):
        return peer
    hops = forwarded_for(scope)
    for hop in reversed(hops):
        if not is_trusted(hop, trusted):
            # Written by a trusted proxy, so an address; anything else is counted to the proxy.
            return str(address(hop) or peer)
    return hops[0] if hops else peer


def forwarded_for(scope: Scope) -> list[str]:
    """Every hop of every X-Forwarded-For header, in order."""
    values = [v.decode("latin-1") for k, v in scope["headers"] if k == FORWARDED_FOR]
    return [hop.strip() for value in values for hop in value.split(",") if hop.strip()]


def is_trusted(host: str, trusted: Sequence[Network]) -> bool:
    found = address(host)
    return found is not None and any(found in network for network in trusted)


def address(host: str) -> Address | None:
    """The address, an IPv4-mapped IPv6 one (a dual-stack socket's) as the IPv4 it maps."""
    try:
        found = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found
