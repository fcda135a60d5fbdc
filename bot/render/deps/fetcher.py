"""Chart dependencies from chart repositories and OCI registries, into the machine's store
(bot/render/deps/store.py).

The order of questions, cheapest first: is the repository allowed (the base's list; a refusal asks
nothing of the network); is the version already in the store (a warm review makes no request);
may the review go online at all; then the downloads, each in a killable process with its own time
and size limits (bot/render/deps/child.py), never in the render sandbox, which has no network.

A chart repository's index is downloaded once per review and shared a short while
(bot/render/deps/indexes.py); the review itself reads from it which release a dependency takes and
where its archive is, and downloads that archive with credentials for the repository's own origin
only (bot/render/deps/download.py). The index gives each archive's sha256: a download that does
not match it is refused. An OCI registry is asked through Helm's registry client.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from bot.render.deps.download import basic
from bot.render.deps.index import index_url, load_index
from bot.render.deps.indexes import IndexFailure, IndexResult, Pinned, SharedIndexes, index_key
from bot.render.deps.policy import Access, FetchPolicy, credentials, normalise, plain_http
from bot.render.deps.process import FetchLimits, run_child
from bot.render.deps.request import DependencyRequest, Fetched, FetchError, newest
from bot.render.deps.store import DependencyStore

__all__ = ["FetchLimits", "HelmFetcher", "DependencyFetcher"]
T = TypeVar("T")

RANGE_SECONDS = 600.0  # how long a range's resolution (`~1.2.0` → 1.2.7) is reused
# How long a failed fetch is said again without asking: a replay's next change, or the same PR's
# other side, would only wait for the same refusal. Short, so a repository back up is seen soon.
FAILED_SECONDS = 60.0


@dataclass(frozen=True)
class _Pulled:
    version: str
    data: bytes
    index_digest: str | None  # what the index says the bytes hash to, where there is one


class DependencyFetcher(Protocol):
    def fetch(
        self, request: DependencyRequest, policy: FetchPolicy, pinned: Pinned | None = None
    ) -> Fetched:
        """`pinned`: the review's indexes, so that one review reads each index once."""
        ...


class HelmFetcher:
    def __init__(
        self,
        store: DependencyStore | None = None,
        limits: FetchLimits | None = None,
        environ: Mapping[str, str] | None = None,
        repositories: Sequence[Access] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store if store is not None else DependencyStore()
        self.limits = limits if limits is not None else FetchLimits()
        # --repository-config: names for `@name` repositories, and their credentials
        self.repositories = tuple(repositories)
        self.environ = environ if environ is not None else os.environ
        self.requests = 0  # fetch processes started: what a warm review must leave at zero
        self.clock = clock
        self.indexes = SharedIndexes(clock)
        self._ranges: dict[tuple[str, str, str], tuple[str, float]] = {}
        self._failed: dict[tuple[str, str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def fetch(
        self, request: DependencyRequest, policy: FetchPolicy, pinned: Pinned | None = None
    ) -> Fetched:
        written = request.repository
        request = self._named(request)
        access = policy.access(request.repository) or policy.access(written)
        if access is None:
            raise FetchError(request, policy.refusal(request.repository))
        access = self._with_credentials(replace(access, url=request.repository))
        hit = self._stored(request, policy.offline)
        if hit is not None:
            return hit
        if policy.offline:
            raise FetchError(request, policy.offline_why)
        key = (request.repository, request.name, request.version)
        with self._lock:
            failed = self._failed.get(key)
        if failed is not None and failed[1] > self.clock():
            raise FetchError(request, failed[0])
        with self.store.locked(request):
            hit = self._stored(request, offline=False)  # fetched meanwhile by another process
            if hit is not None:
                return hit
            try:
                return self._download(request, access, pinned)
            except FetchError as exc:
                with self._lock:
                    self._failed[key] = (exc.reason, self.clock() + FAILED_SECONDS)
                raise

    def _named(self, request: DependencyRequest) -> DependencyRequest:
        """`@name` and `alias:name` are names from Helm's repository config, as in helm."""
        written = request.repository
        if not written.startswith(("@", "alias:")):
            return request
        name = written.removeprefix("@").removeprefix("alias:")
        for entry in self.repositories:
            if entry.name == name:
                return replace(request, repository=entry.url)
        raise FetchError(
            request, f"the repository name {written} is not defined (give --repository-config)"
        )

    def _with_credentials(self, access: Access) -> Access:
        if access.username is not None or credentials(access, self.environ) is not None:
            return access
        for entry in self.repositories:
            if normalise(entry.url) == normalise(access.url):
                return replace(access, username=entry.username, password=entry.password)
        return access

    def _stored(self, request: DependencyRequest, offline: bool) -> Fetched | None:
        version = request.version.strip() if request.exact else self._range_choice(request)
        if version is None and offline:
            version = newest(self.store.versions(request), request.version)
        return self.store.lookup(request, version) if version is not None else None

    def _range_choice(self, request: DependencyRequest) -> str | None:
        with self._lock:
            chosen = self._ranges.get((request.repository, request.name, request.version))
        return chosen[0] if chosen is not None and chosen[1] > self.clock() else None

    def _download(
        self, request: DependencyRequest, access: Access, pinned: Pinned | None
    ) -> Fetched:
        auth = credentials(access, self.environ)
        if request.oci:
            pulled = self._pull_oci(request, access, auth)
        else:
            pulled = self._pull_archive(request, auth, pinned)
        digest = "sha256:" + hashlib.sha256(pulled.data).hexdigest()
        expected = pulled.index_digest
        if expected and digest != f"sha256:{expected.removeprefix('sha256:')}":
            raise FetchError(
                request, f"the archive's sha256 is {digest}, the index says {expected}"
            )
        fetched = self.store.put(request, pulled.version, pulled.data)
        if not request.exact:
            with self._lock:
                key = (request.repository, request.name, request.version)
                self._ranges[key] = (pulled.version, self.clock() + RANGE_SECONDS)
        return fetched

    def _pull_archive(
        self, request: DependencyRequest, auth: tuple[str, str] | None, pinned: Pinned | None
    ) -> _Pulled:
        key = index_key(request.repository, auth)
        index = self.indexes.get(key, lambda: self._read_index(request, auth), pinned)
        if isinstance(index, IndexFailure):
            raise FetchError(request, index.reason)
        entry = index.choose(request)
        url = index.archive_url(request, entry)
        data = self._run(
            {"kind": "archive", "url": url, **_http_auth(request.repository, auth)}, _file_bytes
        )
        if isinstance(data, str):
            raise FetchError(request, data)
        return _Pulled(entry.version, data, entry.digest)

    def _read_index(self, request: DependencyRequest, auth: tuple[str, str] | None) -> IndexResult:
        payload = {"kind": "index", "url": index_url(request.repository)}
        index = self._run(
            {**payload, **_http_auth(request.repository, auth)},
            lambda reply: load_index(request.repository, str(reply["file"])),
        )
        return IndexFailure(index) if isinstance(index, str) else index

    def _pull_oci(
        self, request: DependencyRequest, access: Access, auth: tuple[str, str] | None
    ) -> _Pulled:
        payload = {
            "kind": "oci",
            "repository": request.repository,
            "name": request.name,
            "version": request.version.strip(),
            "exact": request.exact,
            "plain_http": plain_http(request.repository),
            "username": auth[0] if auth else None,
            "password": auth[1] if auth else None,
            "registry_config": access.registry_config,
        }
        pulled = self._run(
            payload, lambda reply: _Pulled(str(reply["version"]), _file_bytes(reply), None)
        )
        if isinstance(pulled, str):
            raise FetchError(request, pulled)
        return pulled

    def _run(self, payload: dict[str, Any], read: Callable[[dict[str, Any]], T]) -> T | str:
        """The child's reply, read by `read` before the child's directory goes; or why none came."""
        with tempfile.TemporaryDirectory(prefix="chart-review-fetch-") as tmp:
            dest = os.path.join(tmp, "out")
            os.mkdir(dest)
            with self._lock:
                self.requests += 1
            reply = run_child({**payload, "dest": dest}, self.limits, self.environ, tmp)
            if "error" in reply:
                return self._reason(str(reply["error"]))
            return read(reply)

    def _reason(self, helm_says: str) -> str:
        """Helm's error, or what it means: a refusal for want of credentials says what to do, a
        write the size limit stopped says which limit."""
        if "file too large" in helm_says or helm_says == "the download exceeded its size limit":
            return f"the download exceeded its size limit ({self.limits.max_bytes} bytes a file)"
        if AUTH_RE.search(helm_says):
            return f"{helm_says}; {AUTH_HINT}"
        return helm_says


def _file_bytes(reply: dict[str, Any]) -> bytes:
    return Path(str(reply["file"])).read_bytes()


def _http_auth(repository: str, auth: tuple[str, str] | None) -> dict[str, str | None]:
    """What the child needs to send the credentials to the repository's own origin only."""
    return {"home": repository, "authorization": basic(*auth) if auth else None}


# What says a repository wants credentials: a 401 status (a word of its own, never the digits of
# a port or a size: a test server on port 40123 once read as "401"), or the words for it.
AUTH_RE = re.compile(
    r"(?<![\w.:/-])401(?![\w./-])|unauthorized|credential|authentication required", re.IGNORECASE
)
AUTH_HINT = (
    "the repository wants credentials: name it in dependencies.repositories and set "
    "HELM_REPO_<NAME>_USERNAME and _PASSWORD for the bot"
)
