"""Chart dependencies from chart repositories and OCI registries, through helm-python-sdk's own
downloader, into the machine's store (bot/render/deps/store.py).

The order of questions, cheapest first: is the repository allowed (the base's list; a refusal asks
nothing of the network); is the version already in the store (a warm review makes no request);
may the review go online at all; then one fetch, in a killable process with its own time and size
limits (bot/render/deps/child.py), never in the render sandbox, which has no network. A chart
repository's index gives each archive's sha256: a download that does not match it is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from bot.render.deps.policy import Access, FetchPolicy, credentials, normalise, plain_http
from bot.render.deps.request import DependencyRequest, Fetched, FetchError, newest
from bot.render.deps.store import DependencyStore

_ROOT = str(Path(__file__).resolve().parents[3])
# What a fetch process may see of this one's environment: the network's settings, nothing else.
_PASSED = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
)
RANGE_SECONDS = 600.0  # how long a range's resolution (`~1.2.0` → 1.2.7) is reused
# How long a failed fetch is said again without asking: a replay's next change, or the same PR's
# other side, would only wait for the same refusal. Short, so a repository back up is seen soon.
FAILED_SECONDS = 60.0


@dataclass(frozen=True)
class FetchLimits:
    """Per fetch. A chart archive is kilobytes and an index rarely 20 MB: the defaults stop only a
    server that streams for ever or never answers."""

    wall_seconds: float = 60.0
    cpu_seconds: int = 30
    max_bytes: int = 64 << 20  # any one file the download writes: the index, the archive


class DependencyFetcher(Protocol):
    def fetch(self, request: DependencyRequest, policy: FetchPolicy) -> Fetched: ...


class HelmFetcher:
    def __init__(
        self,
        store: DependencyStore | None = None,
        limits: FetchLimits = FetchLimits(),
        environ: Mapping[str, str] | None = None,
        repositories: Sequence[Access] = (),
    ) -> None:
        self.store = store if store is not None else DependencyStore()
        self.limits = limits
        # --repository-config: names for `@name` repositories, and their credentials
        self.repositories = tuple(repositories)
        self.environ = environ if environ is not None else os.environ
        self.requests = 0  # fetch processes started: what a warm review must leave at zero
        self._ranges: dict[tuple[str, str, str], tuple[str, float]] = {}
        self._failed: dict[tuple[str, str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def fetch(self, request: DependencyRequest, policy: FetchPolicy) -> Fetched:
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
        if failed is not None and failed[1] > time.monotonic():
            raise FetchError(request, failed[0])
        with self.store.locked(request):
            hit = self._stored(request, offline=False)  # fetched meanwhile by another process
            if hit is not None:
                return hit
            try:
                return self._download(request, access)
            except FetchError as exc:
                with self._lock:
                    self._failed[key] = (exc.reason, time.monotonic() + FAILED_SECONDS)
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
        return chosen[0] if chosen is not None and chosen[1] > time.monotonic() else None

    def _download(self, request: DependencyRequest, access: Access) -> Fetched:
        with tempfile.TemporaryDirectory(prefix="chart-review-fetch-") as tmp:
            reply = self._run(request, access, tmp)
            if "error" in reply:
                raise FetchError(request, self._reason(str(reply["error"])))
            data = Path(str(reply["file"])).read_bytes()
        version = str(reply["version"])
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        expected = reply.get("index_digest")
        if expected and digest != f"sha256:{str(expected).removeprefix('sha256:')}":
            raise FetchError(
                request, f"the archive's sha256 is {digest}, the index says {expected}"
            )
        fetched = self.store.put(request, version, data)
        if not request.exact:
            with self._lock:
                key = (request.repository, request.name, request.version)
                self._ranges[key] = (version, time.monotonic() + RANGE_SECONDS)
        return fetched

    def _reason(self, helm_says: str) -> str:
        """Helm's error, or what it means: a refusal for want of credentials says what to do, a
        write the size limit stopped says which limit."""
        if "file too large" in helm_says:
            return f"the download exceeded its size limit ({self.limits.max_bytes} bytes a file)"
        if any(marker in helm_says.lower() for marker in _AUTH_MARKERS):
            return f"{helm_says}; {AUTH_HINT}"
        return helm_says

    def _run(self, request: DependencyRequest, access: Access, tmp: str) -> dict[str, object]:
        dest = os.path.join(tmp, "out")
        os.mkdir(dest)
        auth = credentials(access, self.environ)
        payload = {
            "repository": request.repository,
            "name": request.name,
            "version": request.version.strip(),
            "exact": request.exact,
            "oci": request.oci,
            "plain_http": plain_http(request.repository),
            "username": auth[0] if auth else None,
            "password": auth[1] if auth else None,
            "registry_config": access.registry_config,
            "dest": dest,
            "max_bytes": self.limits.max_bytes,
            "cpu_seconds": self.limits.cpu_seconds,
        }
        self.requests += 1
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bot.render.deps.child"],
                input=json.dumps(payload).encode(),
                capture_output=True,
                timeout=self.limits.wall_seconds,
                env=_child_env(self.environ, tmp),
                cwd=tmp,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"no answer within {self.limits.wall_seconds:g} s"}
        try:
            reply = json.loads(done.stdout or b"{}")
        except ValueError:
            reply = {}
        if not isinstance(reply, dict) or not reply:
            return {"error": _crashed(done)}
        return reply


_AUTH_MARKERS = ("401", "unauthorized", "credential", "authentication required")
AUTH_HINT = (
    "the repository wants credentials: name it in dependencies.repositories and set "
    "HELM_REPO_<NAME>_USERNAME and _PASSWORD for the bot"
)


def _child_env(environ: Mapping[str, str], tmp: str) -> dict[str, str]:
    env = {key: environ[key] for key in _PASSED if key in environ}
    helm = os.path.join(tmp, "helm")
    return {
        **env,
        "HOME": tmp,
        "TMPDIR": tmp,  # Helm's own temp files go where the fetch's are removed, even when killed
        "PYTHONPATH": _ROOT,
        "HELM_CACHE_HOME": os.path.join(helm, "cache"),
        "HELM_CONFIG_HOME": os.path.join(helm, "config"),
        "HELM_DATA_HOME": os.path.join(helm, "data"),
        "HELM_REGISTRY_CONFIG": os.path.join(helm, "registry.json"),
        "HELM_REPOSITORY_CONFIG": os.path.join(helm, "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": os.path.join(helm, "cache", "repository"),
    }


def _crashed(done: subprocess.CompletedProcess[bytes]) -> str:
    if done.returncode < 0 and -done.returncode == 25:  # SIGXFSZ: wrote past the size limit
        return "the download exceeded its size limit"
    if done.returncode < 0 and -done.returncode in (9, 24):  # SIGKILL, SIGXCPU
        return "the download exceeded its CPU time limit"
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
    return f"the fetch process ended with status {done.returncode}: {tail[0][:300]}"
