"""Chart → rendered manifests: the renderers, profile discovery, and the content-addressed render cache."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from bot.config import ProfileSpec
from bot.yamlerrors import YAML_FAILURES

DEFAULT_PROFILE = "default"
# Helm names the template and line in its messages: `(client/templates/x.yaml:12:3)`, `x.yaml:1:13`.
_TEMPLATE_LINE_RE = re.compile(r"([\w.@+-]+(?:/[\w.@+-]+)*\.(?:ya?ml|tpl|txt|json)):(\d+)")
_SOURCE_RE = re.compile(r"^# Source: (\S+)\s*$", re.MULTILINE)


class RenderFailure(Exception):
    """Helm could not render: `template`/`line` are from Helm's message when it names them."""

    def __init__(self, message: str, template: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.template = template
        self.line = line


class Renderer(Protocol):
    version: str

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        """Render a chart archive (.tgz bytes): template name (`<chart>/templates/x.yaml`) → text.
        Raises RenderFailure."""
        ...


def failure_from_message(message: str) -> RenderFailure:
    first = message.strip()
    match = _TEMPLATE_LINE_RE.search(first)
    if match is None:
        return RenderFailure(first)
    return RenderFailure(first, match[1], int(match[2]))


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
                return chart.render(
                    values=dict(values), name=release, namespace=namespace, is_install=True
                )
        except self._helm.HelmError as exc:
            raise failure_from_message(str(exc)) from None


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
            proc = subprocess.run(
                [self._binary, "template", release, str(chart), "-n", namespace, "-f", str(vf)],
                capture_output=True,
                text=True,
                timeout=300,
            )
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


def make_renderer(name: str) -> Renderer:
    if name == "embedded":
        return EmbeddedHelm()
    if name == "helm":
        return HelmCLI()
    raise ValueError(f"unknown renderer '{name}' (expected embedded or helm)")


# -- profiles ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """A values profile of a chart at one side: where its values come from, and its flags."""

    name: str
    values_path: str | None  # repository path of the values file; None for the chart's defaults
    inline: Mapping[str, Any] | None = None
    arbitrary_uid: bool = False


def profile_name(ci_file: str) -> str:
    stem = ci_file.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return stem[: -len("-values")] if stem.endswith("-values") and stem != "-values" else stem


def discover_profiles(
    chart_dir: str, paths: tuple[str, ...], extra: list[ProfileSpec]
) -> dict[str, Profile]:
    """chart-testing's rule: every `ci/*.yaml` is a profile and the defaults alone are not rendered;
    without any, one profile `default`. Config entries add profiles or set flags on existing ones."""
    prefix = f"{chart_dir}/ci/" if chart_dir not in ("", ".") else "ci/"
    ci = [p for p in paths if p.startswith(prefix) and "/" not in p[len(prefix) :]]
    ci = [p for p in ci if p.endswith((".yaml", ".yml"))]
    profiles = {profile_name(p): Profile(profile_name(p), p) for p in ci}
    if not profiles:
        profiles[DEFAULT_PROFILE] = Profile(DEFAULT_PROFILE, None)
    for spec in extra:
        existing = profiles.get(spec.name)
        if spec.defines_values:
            profiles[spec.name] = Profile(
                spec.name, spec.values_file, spec.values, spec.arbitrary_uid
            )
        elif existing is not None:
            profiles[spec.name] = Profile(
                existing.name, existing.values_path, existing.inline, spec.arbitrary_uid
            )
        elif spec.name == DEFAULT_PROFILE:
            profiles[DEFAULT_PROFILE] = Profile(DEFAULT_PROFILE, None, None, spec.arbitrary_uid)
    return dict(sorted(profiles.items()))


def load_values(text: str, source: str) -> dict[str, Any]:
    """Parse a values file; a file that is not a mapping is an error naming the file and line."""
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except YAML_FAILURES as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise RenderFailure(
            f"values file {source}{f' line {line}' if line else ''}: not valid YAML: "
            f"{getattr(exc, 'problem', exc)}",
            source,
            line,
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise RenderFailure(
            f"values file {source} line 1: expected a mapping, found {kind}", source, 1
        )
    return data


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
