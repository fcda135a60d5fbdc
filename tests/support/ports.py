"""A free TCP port on 127.0.0.1, for servers that must be told their port before they start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """Free when probed; the caller's server may still lose it to another process, so callers
    retry on a failed bind."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
