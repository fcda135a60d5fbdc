"""An HTTP proxy on 127.0.0.1 that forwards nothing: it records each request line a client sent it
(`CONNECT host:443 HTTP/1.1` for TLS, `GET http://host/path HTTP/1.1` for cleartext) and answers
502. With HTTPS_PROXY and HTTP_PROXY pointing at it, a test sees how a client would have spoken to
a host by name without any name being resolved or any packet leaving the machine.

    with RecordingProxy() as proxy:
        env = {"HTTPS_PROXY": proxy.url, "HTTP_PROXY": proxy.url}
        ...
        assert proxy.lines == ["CONNECT registry.example.test:443 HTTP/1.1"]
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_POLL_SECONDS = 0.02
_STOP_SECONDS = 5.0


class RecordingProxy:
    def __init__(self) -> None:
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def lines(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def record(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)

    def __enter__(self) -> RecordingProxy:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            daemon=True,
            name="recording-proxy",
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=_STOP_SECONDS)
        self._server.server_close()


def _handler_for(proxy: RecordingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(_ProxyHandler):
        pass

    Handler.proxy = proxy
    return Handler


class _ProxyHandler(BaseHTTPRequestHandler):
    proxy: RecordingProxy

    def _refuse(self) -> None:
        self.proxy.record(self.requestline)
        self.send_response(502)
        self.send_header("Content-Length", "0")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    do_CONNECT = do_GET = do_HEAD = do_POST = do_PUT = _refuse

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the record is `RecordingProxy.lines`."""
