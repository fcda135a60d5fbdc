"""A loopback TCP server that records every connection it is offered: the proof that a schema
reference, a dependency or a link made no connection at all."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback server that records every connection it is offered."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(1)
                seen.append(conn.recv(1024) or b"(connected)")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join(timeout=5)
    server.close()
