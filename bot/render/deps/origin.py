"""Where a repository's credentials may go: its own origin, as browsers and RFC 6454 define one
(scheme, host, port), and nowhere else. Go's HTTP client, which Helm's downloader uses, compares
host names only when it follows a redirect, so another port of the same host, or a redirect there,
received them; the review's own downloads (bot/render/deps/download.py) compare whole origins."""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import urlsplit

# The only schemes a chart repository's index or archive is fetched over, with their ports.
DEFAULT_PORTS = {"http": 80, "https": 443}


class Origin(NamedTuple):
    scheme: str
    host: str
    port: int


def origin(url: str) -> Origin | None:
    """The URL's origin; None when it is not http(s), has no host, or its port is no number."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    return Origin(
        scheme, parts.hostname.lower(), port if port is not None else DEFAULT_PORTS[scheme]
    )
