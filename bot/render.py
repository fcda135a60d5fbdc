"""Chart → rendered manifests: the renderers, and the content-addressed render cache."""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.sandbox import SandboxLimits

# Helm renders outside the GIL (a ctypes call, or a render process), so one profile renders while
# another's YAML is parsed; the sandbox keeps one render process per worker.
RENDER_WORKERS = max(2, min(4, os.cpu_count() or 2))
# The archive's top directory (bot.gitrepo.archive): files Helm's loader names are given under it, so
# they map to the repository like template names do (`<chart>/templates/x.yaml`).
ARCHIVE_ROOT = "chart"
# Helm names the template and line in its messages: `(client/templates/x.yaml:12:3)`, `x.yaml:1:13`.
_TEMPLATE_LINE_RE = re.compile(r"([\w.@+-]+(?:/[\w.@+-]+)*\.(?:ya?ml|tpl|txt|json)):(\d+)")
# The loader names a file without a line: `cannot load Chart.yaml: ... yaml: line 2: ...`,
# `decompressed chart file "chart/values.yaml" is larger than ...`.
_LOAD_FILE_RE = re.compile(r'^cannot load ([^\s:]+):|^decompressed chart file "([^"]+)"')
_YAML_LINE_RE = re.compile(r"\byaml: line (\d+):")
_SOURCE_RE = re.compile(r"^# Source: (\S+)\s*$", re.MULTILINE)


class RenderFailure(Exception):
    """Helm could not render: `template`/`line` are from Helm's message when it names them.
    `transient` failures (a wall-clock timeout under load, a kill by the kernel) may not recur, so
    they are not cached."""

    def __init__(
        self,
        message: str,
        template: str | None = None,
        line: int | None = None,
        transient: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.template = template
        self.line = line
        self.transient = transient


class Renderer(Protocol):
    version: str

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        """Render a chart archive (.tgz bytes): template name (`<chart>/templates/x.yaml`) → text.
        Raises RenderFailure."""
        ...


def values_json(values: Mapping[str, Any]) -> str:
    """Values as Helm receives them. YAML's timestamps (`date: 2024-01-01`) load as dates, which JSON
    has not: they go as the ISO text Helm's own YAML reader keeps them as."""
    return json.dumps(values, default=_iso_text)


def _iso_text(value: object) -> str:
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    raise TypeError(f"a values file holds a {type(value).__name__}, which Helm cannot take")


def failure_from_message(message: str) -> RenderFailure:
    first = message.strip()
    loaded = _LOAD_FILE_RE.search(first)
    if loaded is not None:
        name = loaded[1] or loaded[2]
        if not name.startswith(f"{ARCHIVE_ROOT}/"):
            name = f"{ARCHIVE_ROOT}/{name}"
        line = _YAML_LINE_RE.search(first)
        return RenderFailure(first, name, int(line[1]) if line else None)
    match = _TEMPLATE_LINE_RE.search(first)
    if match is None:
        return RenderFailure(first)
    return RenderFailure(first, match[1], int(match[2]))


def missing_dependencies(metadata: Mapping[str, Any], loaded: list[dict[str, Any]]) -> list[str]:
    """Dependencies Chart.yaml declares that are not under charts/: `helm template` refuses such a
    chart (`found in Chart.yaml, but missing in charts/ directory`); the SDK would render without."""
    present = {d.get("name") for d in loaded}
    declared = metadata.get("dependencies") or []
    return [str(d.get("name")) for d in declared if d.get("name") not in present]


def dependency_failure(archive: bytes, names: list[str]) -> RenderFailure:
    line = _declaration_line(archive, names[0])
    listed = ", ".join(names)
    return RenderFailure(
        f"dependency {listed} is declared in Chart.yaml but missing from charts/ "
        "(`helm dependency build` fetches it; the review renders only what the PR commits)",
        f"{ARCHIVE_ROOT}/Chart.yaml",
        line,
    )


def _declaration_line(archive: bytes, name: str) -> int | None:
    """The line of `name: <dependency>` in the archive's Chart.yaml (only read on this error path)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            member = tar.extractfile(f"{ARCHIVE_ROOT}/Chart.yaml")
            text = member.read().decode(errors="replace") if member is not None else ""
    except (tarfile.TarError, KeyError, OSError):
        return None
    pattern = re.compile(rf"^\s*-?\s*name:\s*[\"']?{re.escape(name)}[\"']?\s*$")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return None


class EmbeddedHelm:
    """Helm's Go SDK in-process (helm-python-sdk): exact Helm semantics, no binary."""

    def __init__(self) -> None:
        import helm_python

        self._helm = helm_python
        self.version = f"helm-python-sdk/{helm_python.__version__}"

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        try:
            with self._helm.Chart.load_archive(archive) as chart:
                metadata = chart.metadata
                if metadata.get("dependencies"):
                    missing = missing_dependencies(metadata, chart.dependencies)
                    if missing:
                        raise dependency_failure(archive, missing)
                return chart.render(
                    values=json.loads(values_json(values)),
                    name=release,
                    namespace=namespace,
                    is_install=True,
                )
        except self._helm.HelmError as exc:
            raise failure_from_message(str(exc)) from None


HELM_CLI_TIMEOUT = 300.0


class HelmCLI:
    """`helm template`, for users who pin a helm binary."""

    def __init__(self, binary: str = "helm") -> None:
        path = shutil.which(binary)
        if path is None:
            raise RenderFailure(f"--renderer helm: no '{binary}' binary on PATH")
        self._binary = path
        out = subprocess.run([path, "version", "--short"], capture_output=True, text=True)
        self.version = f"helm-cli/{out.stdout.strip() or 'unknown'}"

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        with tempfile.TemporaryDirectory(prefix="chart-review-") as tmp:
            chart, vf = Path(tmp) / "chart.tgz", Path(tmp) / "values.json"
            chart.write_bytes(archive)
            vf.write_text(json.dumps(values))
            try:
                proc = subprocess.run(
                    [self._binary, "template", release, str(chart), "-n", namespace, "-f", str(vf)],
                    capture_output=True,
                    text=True,
                    timeout=HELM_CLI_TIMEOUT,
                )
            except subprocess.TimeoutExpired:
                raise RenderFailure(
                    f"render exceeded its time limit ({HELM_CLI_TIMEOUT:.0f} s of wall-clock time)"
                ) from None
        if proc.returncode != 0:
            raise failure_from_message(proc.stderr.replace("Error: ", "", 1))
        return split_sources(proc.stdout)


def split_sources(stream: str) -> dict[str, str]:
    """Split `helm template` output into template name → text, by its `# Source:` markers."""
    out: dict[str, str] = {}
    marks = list(_SOURCE_RE.finditer(stream))
    for mark, nxt in zip(marks, [*marks[1:], None], strict=True):
        end = nxt.start() if nxt is not None else len(stream)
        out[mark[1]] = out.get(mark[1], "") + stream[mark.end() : end]
    return out


def make_renderer(name: str, limits: SandboxLimits | None = None) -> Renderer:
    """`embedded` renders in a pool of sandboxed render processes (bot.sandbox): charts come from
    untrusted PRs. `helm` runs a pinned binary per render."""
    if name == "embedded":
        from bot.sandbox import SandboxedHelm, SandboxLimits

        return SandboxedHelm(limits or SandboxLimits())
    if name == "helm":
        return HelmCLI()
    raise ValueError(f"unknown renderer '{name}' (expected embedded or helm)")


# -- cache -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheKey:
    """Content address of a render: same chart tree, same values, same renderer → same output."""

    chart_tree: str
    values_id: str
    renderer: str
    release: str
    namespace: str

    @property
    def digest(self) -> str:
        raw = "\0".join(
            (self.chart_tree, self.values_id, self.renderer, self.release, self.namespace)
        )
        return hashlib.sha256(raw.encode()).hexdigest()


@dataclass(frozen=True)
class CachedRender:
    manifests: Mapping[str, str] | None
    error: RenderFailure | None


class RenderCache:
    """In memory always; on disk too when given a directory (shared by every review on a machine)."""

    def __init__(self, directory: Path | None = None, max_entries: int = 512) -> None:
        self._dir = directory
        self._mem: dict[str, CachedRender] = {}
        self._max = max_entries
        self._lock = threading.Lock()
        if directory is not None:
            directory.mkdir(parents=True, exist_ok=True)

    def get(self, key: CacheKey) -> CachedRender | None:
        digest = key.digest
        with self._lock:
            hit = self._mem.get(digest)
        if hit is not None or self._dir is None:
            return hit
        path = self._dir / f"{digest}.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        err = data.get("error")
        found = CachedRender(
            data.get("manifests"),
            RenderFailure(err["message"], err.get("template"), err.get("line")) if err else None,
        )
        self._remember(digest, found)
        return found

    def put(self, key: CacheKey, value: CachedRender) -> None:
        digest = key.digest
        self._remember(digest, value)
        if self._dir is None:
            return
        err = value.error
        payload = {
            "manifests": value.manifests,
            "error": {"message": err.message, "template": err.template, "line": err.line}
            if err
            else None,
        }
        tmp = self._dir / f".{digest}.{threading.get_ident()}.tmp"
        tmp.write_text(json.dumps(payload))
        tmp.replace(self._dir / f"{digest}.json")

    def _remember(self, digest: str, value: CachedRender) -> None:
        with self._lock:
            if len(self._mem) >= self._max:
                self._mem.pop(next(iter(self._mem)))
            self._mem[digest] = value
