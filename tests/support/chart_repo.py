"""A real Helm chart repository on 127.0.0.1, served by an `http.server` thread.

Charts are packaged with helm-python-sdk's `package` and indexed with its `repo_index_generate`,
so the bytes and the `index.yaml` are exactly what `helm package` and `helm repo index` make.
Every request is logged, and a test can switch the server's behaviour at any time: serve, answer
every request with a status, require basic auth, or hang; and send a path elsewhere (`redirects`).

    repo = chart_repo.add(ChartSpec("redis", "17.3.0", templates={"pod.yaml": POD}))
    helm_python.registry.pull("redis", repo_url=chart_repo.url, version="17.3.0", ...)
    assert chart_repo.paths == ["/index.yaml", "/redis-17.3.0.tgz"]
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import helm_python
import pytest
import yaml

# A stopped server must not keep the test waiting on a hanging handler or an idle keep-alive.
_STOP_SECONDS = 5.0
# How often serve_forever looks for shutdown(); its default 0.5 s would be every test's teardown.
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ChartSpec:
    """A chart as a test describes it. `values` is a mapping (dumped as YAML) or the file's text;
    `templates` and `files` map paths (under templates/, and under the chart) to text."""

    name: str
    version: str
    templates: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Any] | str = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    chart_type: str = "application"  # "library" for a `common`-style chart
    app_version: str | None = None


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    authorization: str | None  # the Authorization header as sent, to assert what a client sent


# The modes, as values: `ChartRepo.mode = Status(404)` switches every later request.
@dataclass(frozen=True)
class Serve:
    """Serve index.yaml and the charts."""


@dataclass(frozen=True)
class Status:
    """Answer every request with `code` (a 401 carries `WWW-Authenticate: Basic`, as a real
    repository behind basic auth does)."""

    code: int


@dataclass(frozen=True)
class BasicAuth:
    """Serve only requests with these credentials; 401 with `WWW-Authenticate: Basic` otherwise."""

    username: str
    password: str

    def accepts(self, header: str | None) -> bool:
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        return header == f"Basic {token}"


@dataclass(frozen=True)
class Hang:
    """Read each request and never answer, until the server stops."""


Mode = Serve | Status | BasicAuth | Hang


def write_chart(spec: ChartSpec, directory: Path) -> Path:
    """Write `spec` as a chart directory under `directory`; returns the chart's directory."""
    root = directory / f"{spec.name}-{spec.version}" / spec.name
    chart_yaml: dict[str, Any] = {
        "apiVersion": "v2",
        "name": spec.name,
        "version": spec.version,
        "type": spec.chart_type,
    }
    if spec.app_version is not None:
        chart_yaml["appVersion"] = spec.app_version
    values = spec.values if isinstance(spec.values, str) else yaml.safe_dump(dict(spec.values))
    files = {
        "Chart.yaml": yaml.safe_dump(chart_yaml, sort_keys=False),
        "values.yaml": values,
        **{f"templates/{path}": text for path, text in spec.templates.items()},
        **spec.files,
    }
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def package_chart(spec: ChartSpec, destination: Path, sources: Path) -> Path:
    """`helm package` of `spec` written under `sources`; returns the .tgz in `destination`."""
    destination.mkdir(parents=True, exist_ok=True)
    chart_dir = write_chart(spec, sources)
    return Path(helm_python.chart.package(chart_dir, destination=destination))


class ChartRepo:
    """The repository's files live in `workdir` (sources in `src/`, served files in `public/`),
    served under `prefix` (e.g. "/helm-charts", as a GitHub Pages repository is); use as a
    context manager, or through the `chart_repo` fixture."""

    def __init__(self, workdir: Path, prefix: str = "") -> None:
        self.prefix = prefix.rstrip("/")
        self._sources = workdir / "src"
        self.public = workdir / "public"
        self.public.mkdir(parents=True, exist_ok=True)
        self.mode: Mode = Serve()
        # path → Location: answered 302 (after the mode's auth check), as a CDN or a mirror does
        self.redirects: dict[str, str] = {}
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread: threading.Thread | None = None
        self.index()  # an empty repository is still a repository: index.yaml with no entries

    @property
    def url(self) -> str:
        """e.g. "http://127.0.0.1:43121" (no trailing slash, as Chart.yaml's `repository:`)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def add(self, *specs: ChartSpec) -> list[Path]:
        """Package each chart into the repository and re-index; returns the archives' paths."""
        archives = [package_chart(spec, self.public, self._sources) for spec in specs]
        self.index()
        return archives

    def index(self, base_url: str | None = None) -> dict[str, Any]:
        """(Re)write index.yaml over every archive served; entries' URLs are relative, as
        `helm repo index` without `--url` writes them, or under `base_url` as with it."""
        return helm_python.registry.repo_index_generate(self.public, base_url=base_url)

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    @property
    def paths(self) -> list[str]:
        return [request.path for request in self.requests]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    def start(self) -> ChartRepo:
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _POLL_SECONDS},
            daemon=True,
            name=f"chart-repo-{self.url}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Wakes hanging handlers (they close without answering) and stops accepting."""
        self.stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=_STOP_SECONDS)
        self._server.server_close()

    def __enter__(self) -> ChartRepo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _handler_for(repo: ChartRepo) -> type[BaseHTTPRequestHandler]:
    class Handler(_RepoHandler):
        pass

    Handler.repo = repo
    return Handler


class _RepoHandler(BaseHTTPRequestHandler):
    repo: ChartRepo
    protocol_version = "HTTP/1.1"  # keep-alive, as real repositories do

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _answer(self, body: bool) -> None:
        auth = self.headers.get("Authorization")
        self.repo.record(Request(self.command, self.path, auth))
        mode = self.repo.mode
        if isinstance(mode, Hang):
            self.repo.stopping.wait()
            self.close_connection = True
        elif isinstance(mode, Status):
            self._send(mode.code, b"", body)
        elif isinstance(mode, BasicAuth) and not mode.accepts(auth):
            self._send(401, b"", body)
        elif self.path in self.repo.redirects:
            self._send(302, b"", body, location=self.repo.redirects[self.path])
        else:
            self._serve_file(body)

    def _serve_file(self, body: bool) -> None:
        path = self.path.split("?", 1)[0]
        name = path.removeprefix(f"{self.repo.prefix}/")
        target = self.repo.public / name
        if name == path or "/" in name or not name or not target.is_file():
            self._send(404, b"not found\n", body)
            return
        kind = "text/yaml" if name.endswith(".yaml") else "application/gzip"
        self._send(200, target.read_bytes(), body, kind)

    def _send(
        self, code: int, data: bytes, body: bool, kind: str = "text/plain", location: str = ""
    ) -> None:
        self.send_response(code)
        if location:
            self.send_header("Location", location)
        if code == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="chart-review-test"')
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the request log is `ChartRepo.requests`, not stderr."""


@pytest.fixture
def chart_repo(tmp_path: Path) -> Iterator[ChartRepo]:
    """An empty chart repository on 127.0.0.1, serving; `chart_repo.add(ChartSpec(...))`."""
    with ChartRepo(tmp_path / "chart-repo") as repo:
        yield repo
