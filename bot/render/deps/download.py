"""One HTTP GET into a file, for a fetch process (bot/render/deps/child.py): a chart repository's
index, or an archive the index names.

The repository's credentials go only to its own origin (bot/render/deps/origin.py), on the first
request and on each redirect alike: urllib, left alone, copies every header to wherever it is
redirected, and Go's client (Helm's) to any port of the same host. So the Authorization header is
never one urllib copies, and it is set again on a redirect that stays on the origin. Redirects go
only to http(s), at most urllib's 10. Nothing past `max_bytes` is read or written.
"""

from __future__ import annotations

import http.client
import urllib.error
import urllib.request
from base64 import b64encode
from typing import IO

from bot.render.deps.origin import Origin, origin

CHUNK = 1 << 16


class DownloadError(Exception):
    """Why the download failed, in words for the finding."""


def basic(username: str, password: str) -> str:
    return "Basic " + b64encode(f"{username}:{password}".encode()).decode()


def download(
    url: str,
    path: str,
    *,
    home: str,
    authorization: str | None,
    max_bytes: int,
    timeout: float,
) -> None:
    """GET `url` into `path`. `authorization` is sent to `home`'s origin only."""
    where = origin(home) if authorization is not None else None
    opener = urllib.request.build_opener(_Redirects(where, authorization))
    request = urllib.request.Request(url)
    _authorize(request, where, authorization)
    try:
        with opener.open(request, timeout=timeout) as response:
            _copy(response, path, max_bytes)
    except urllib.error.HTTPError as exc:
        raise DownloadError(f"failed to fetch {url}: {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        said = reason.strerror if isinstance(reason, OSError) and reason.strerror else reason
        raise DownloadError(f"failed to fetch {url}: {said}") from None
    except (OSError, http.client.HTTPException) as exc:
        raise DownloadError(f"failed to fetch {url}: {exc or type(exc).__name__}") from None


def _authorize(
    request: urllib.request.Request, home: Origin | None, authorization: str | None
) -> None:
    # An unredirected header: urllib's redirect handler copies only the others.
    if authorization is not None and home is not None and origin(request.full_url) == home:
        request.add_unredirected_header("Authorization", authorization)


class _Redirects(urllib.request.HTTPRedirectHandler):
    def __init__(self, home: Origin | None, authorization: str | None) -> None:
        self.home, self.authorization = home, authorization

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        if origin(newurl) is None:
            raise urllib.error.HTTPError(
                req.full_url, code, f"redirected to {newurl}, not an http(s) URL", headers, fp
            )
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None:
            new.remove_header("Authorization")  # however it got there, it is decided again
            _authorize(new, self.home, self.authorization)
        return new


def _copy(response: http.client.HTTPResponse, path: str, max_bytes: int) -> None:
    too_large = DownloadError(f"the download exceeded its size limit ({max_bytes} bytes a file)")
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise too_large
    written = 0
    with open(path, "wb") as out:
        while chunk := response.read(CHUNK):
            written += len(chunk)
            if written > max_bytes:
                raise too_large
            out.write(chunk)
