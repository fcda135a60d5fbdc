"""A real OCI registry on 127.0.0.1: Debian's `docker-registry` (the CNCF distribution registry
2.8) on a free port with its own storage and config, and a registry that accepts and never answers.

Charts go in with helm-python-sdk's `push`, as a release pipeline pushes them. The registry's access
log (combined log format, on its stdout) is the request log: `registry.blob_gets()` counts the
blob downloads a test caused.

    ref = oci_registry.push(tgz)                # "oci://127.0.0.1:PORT/charts/redis"
    RegistryClient(plain_http=True).tags(ref)   # ["17.3.0"]
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import helm_python
import pytest

from tests.support.ports import free_port

BINARY = Path("/usr/bin/docker-registry")
SKIP_ENV = "CHART_REVIEW_NO_REGISTRY"
MISSING = (
    f"{BINARY} is not installed (Debian package docker-registry, the CNCF distribution "
    "registry): .ci/run and `make test` install it with apt-get; "
    f"or set {SKIP_ENV}=1 to skip the tests that need it"
)
REPOSITORY = "charts"  # where pushed charts live: oci://HOST/charts/NAME:VERSION
USERNAME, PASSWORD = "chart-review", "registry-secret"

# Another process can take the free port between our probe and the registry's bind; then it exits
# at once and we try another port.
_PORT_ATTEMPTS = 3
_READY_SECONDS = 15.0
_STOP_SECONDS = 5.0
# 127.0.0.1 - user [01/Dec/2026:13:55:31 +0000] "GET /v2/ HTTP/1.1" 200 2 "" "curl/7.88.1"
_ACCESS_LINE = re.compile(
    r'^\S+ \S+ \S+ \[[^\]]*\] "(?P<method>\S+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) '
)


@dataclass(frozen=True)
class Access:
    """One request as the registry logged it. With auth, a client's every request is logged
    twice: first answered 401 (the challenge), then with the credentials."""

    method: str
    path: str
    status: int


def require_registry_binary() -> None:
    """Fail (not skip) when the registry is missing: a silent skip would hide untested fetch code."""
    if BINARY.is_file():
        return
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: no OCI registry tests")
    pytest.fail(MISSING, pytrace=False)


def registry_config(storage: Path, port: int, htpasswd: Path | None) -> str:
    auth = f"auth:\n  htpasswd:\n    realm: chart-review-test\n    path: {htpasswd}\n"
    return (
        "version: 0.1\n"
        "log:\n  level: warn\n  formatter: text\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n"
        # A fixed secret silences the registry's warning about a generated one.
        f"http:\n  addr: 127.0.0.1:{port}\n  secret: chart-review-test\n"
        + (auth if htpasswd is not None else "")
    )


def write_htpasswd(path: Path, username: str, password: str) -> Path:
    """The registry accepts bcrypt entries only; cost 4 keeps each login fast."""
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    path.write_text(f"{username}:{hashed}\n")
    return path


class OciRegistry:
    """A registry process serving `workdir`; use as a context manager or through a fixture.
    `auth=True` makes it refuse anonymous requests (401) and accept USERNAME/PASSWORD."""

    def __init__(self, workdir: Path, auth: bool = False) -> None:
        self.workdir = workdir
        self.auth = auth
        self.port = 0
        self._log = workdir / "access.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._client: helm_python.RegistryClient | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The repository root charts are pushed to, e.g. "oci://127.0.0.1:43121/charts"."""
        return f"oci://{self.host}/{REPOSITORY}"

    def start(self) -> OciRegistry:
        require_registry_binary()
        self.workdir.mkdir(parents=True, exist_ok=True)
        htpasswd = None
        if self.auth:
            htpasswd = write_htpasswd(self.workdir / "htpasswd", USERNAME, PASSWORD)
        for _ in range(_PORT_ATTEMPTS):
            self.port = free_port()
            config = self.workdir / "config.yml"
            config.write_text(registry_config(self.workdir / "storage", self.port, htpasswd))
            self._proc = self._spawn(config)
            if self._wait_ready(self._proc):
                return self
            self._stop_process()
        raise RuntimeError(f"docker-registry exited on {_PORT_ATTEMPTS} ports:\n{self.log_tail()}")

    def _spawn(self, config: Path) -> subprocess.Popen[bytes]:
        with self._log.open("ab") as log:  # the child keeps its own descriptor
            return subprocess.Popen(
                [str(BINARY), "serve", str(config)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> bool:
        """True once /v2/ answers as a registry (200, or 401 with auth); False if it exited."""
        deadline = time.monotonic() + _READY_SECONDS
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"http://{self.host}/v2/", timeout=0.5) as answer:
                    headers = answer.headers
            except urllib.error.HTTPError as refused:  # 401 from an auth registry is ready too
                headers = refused.headers
            except OSError:  # not listening yet
                time.sleep(0.02)
                continue
            # Ours, not another server that won the port in between.
            return bool(headers.get("Docker-Distribution-Api-Version")) and proc.poll() is None
        raise RuntimeError(f"docker-registry did not answer on {self.host}:\n{self.log_tail()}")

    def client(self) -> helm_python.RegistryClient:
        """A plain-HTTP client, logged in when the registry wants auth; its credentials file is
        the registry's own, so the user's Helm registry config is never touched."""
        if self._client is None:
            self._client = helm_python.RegistryClient(
                plain_http=True, credentials_file=self.workdir / "credentials.json"
            )
            if self.auth:
                self._client.login(self.host, USERNAME, PASSWORD, plain_http=True)
        return self._client

    def push(self, archive: Path) -> str:
        """Push a chart .tgz; returns its reference without tag, e.g. oci://HOST/charts/redis."""
        helm_python.registry.push(archive, self.url, client=self.client(), plain_http=True)
        name = archive.name.rsplit("-", 1)[0]
        return f"{self.url}/{name}"

    def requests(self) -> list[Access]:
        """Every request logged so far. The registry writes a request's line before the response
        is complete, so any request a client has finished is already here."""
        accesses = []
        for line in self._log.read_text(errors="replace").splitlines():
            if found := _ACCESS_LINE.match(line):
                accesses.append(Access(found["method"], found["path"], int(found["status"])))
        return accesses

    def blob_gets(self, status: int = 200) -> int:
        """How many blobs (chart layers and configs) were downloaded."""
        return sum(
            1
            for access in self.requests()
            if access.method == "GET" and "/blobs/" in access.path and access.status == status
        )

    def log_tail(self, chars: int = 2000) -> str:
        return self._log.read_text(errors="replace")[-chars:] if self._log.exists() else ""

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self._stop_process()

    def _stop_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_STOP_SECONDS)

    def __enter__(self) -> OciRegistry:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class HangingServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte, like a
    registry behind a stalled proxy. `connections` counts what it accepted."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)  # so the accept loop sees `stop` promptly
        self.port = int(self._sock.getsockname()[1])
        self.connections = 0
        self._held: list[socket.socket] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="hanging-server")

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"oci://{self.host}/{REPOSITORY}"

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by stop()
                return
            self._held.append(conn)  # held open, never read or answered
            self.connections += 1

    def __enter__(self) -> HangingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._thread.join(timeout=_STOP_SECONDS)
        for conn in self._held:
            conn.close()
        self._sock.close()


@pytest.fixture
def oci_registry(tmp_path: Path) -> Iterator[OciRegistry]:
    """An empty anonymous registry; `oci_registry.push(tgz)`."""
    with OciRegistry(tmp_path / "oci-registry") as registry:
        yield registry


@pytest.fixture
def auth_registry(tmp_path: Path) -> Iterator[OciRegistry]:
    """A registry that answers 401 without USERNAME/PASSWORD; its `client()` is logged in."""
    with OciRegistry(tmp_path / "oci-registry-auth", auth=True) as registry:
        yield registry


@pytest.fixture
def hanging_registry() -> Iterator[HangingServer]:
    """`oci://{hanging_registry.host}/charts/NAME` accepts the connection and never answers."""
    with HangingServer() as server:
        yield server
