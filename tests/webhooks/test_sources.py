"""Whom a request is counted to, from its ASGI scope: the peer, or the client a trusted proxy
names in X-Forwarded-For, read from the right."""

from __future__ import annotations

import ipaddress

import pytest

from webhooks.sources import source_of

CLUSTER = (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8"))


def scope(peer: str | None, *forwarded: str) -> dict[str, object]:
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded]
    return {"client": (peer, 443) if peer else None, "headers": headers}


@pytest.mark.parametrize(
    ("request_scope", "source"),
    [
        # Not from a trusted proxy: the peer, whatever it says of others.
        (scope("203.0.113.7", "140.82.115.10"), "203.0.113.7"),
        # The proxy's own entry is the last; what the client wrote before it is not believed.
        (scope("10.1.2.3", "140.82.115.10, 203.0.113.7"), "203.0.113.7"),
        # Two trusted proxies in a row (a load balancer, then the Ingress controller).
        (scope("10.1.2.3", "203.0.113.7, 10.9.9.9"), "203.0.113.7"),
        # Several headers are one list, in order.
        (scope("10.1.2.3", "198.51.100.1", "203.0.113.7"), "203.0.113.7"),
        # A dual-stack socket's IPv4-mapped peer is that IPv4 address, trusted or not.
        (scope("::ffff:10.1.2.3", "203.0.113.7"), "203.0.113.7"),
        (scope("fd00::5", "2001:db8::1"), "2001:db8::1"),
        # A trusted proxy that names nobody: the proxy itself.
        (scope("10.1.2.3"), "10.1.2.3"),
        # Nothing but trusted hops: the first of them, where the request began.
        (scope("10.1.2.3", "10.4.4.4, 10.5.5.5"), "10.4.4.4"),
        # An entry that is no address, where the proxy's own should be: counted to the proxy.
        (scope("10.1.2.3", "140.82.115.10, unknown"), "10.1.2.3"),
        (scope(None, "203.0.113.7"), "unknown"),
    ],
)
def test_the_source_of_a_request(request_scope: dict[str, object], source: str) -> None:
    assert source_of(request_scope, CLUSTER) == source


def test_without_trusted_proxies_the_peer_is_the_source() -> None:
    assert source_of(scope("10.1.2.3", "203.0.113.7"), ()) == "10.1.2.3"
