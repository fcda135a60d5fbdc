"""What every renderer shares: the `Renderer` protocol, `RenderFailure` and how Helm's messages name
the template and line, and the values as Helm is handed them."""

from __future__ import annotations

import datetime
import json
import os
import re
from collections.abc import Mapping
from typing import Any, Protocol

from bot.errors import ChartReviewError
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.tarball.headers import ArchiveRefused
from bot.tarball.reader import members
from bot.textlines import git_lines

# Helm renders outside the GIL (a ctypes call, or a render process), so one profile renders while
# another's YAML is parsed; the sandbox keeps one render process per worker.
RENDER_WORKERS = max(2, min(4, os.cpu_count() or 2))
# The archive's top directory (bot/charts/archive.py): files Helm's loader names are given under it, so
# they map to the repository like template names do (`<chart>/templates/x.yaml`).
ARCHIVE_ROOT = "chart"
# Helm names the template and line in its messages: `(client/templates/x.yaml:12:3)`, `x.yaml:1:13`.
_TEMPLATE_LINE_RE = re.compile(r"([\w.@+-]+(?:/[\w.@+-]+)*\.(?:ya?ml|tpl|txt|json)):(\d+)")
# The loader names a file without a line: `cannot load Chart.yaml: ... yaml: line 2: ...`,
# `decompressed chart file "chart/values.yaml" is larger than ...`.
_LOAD_FILE_RE = re.compile(r'^cannot load ([^\s:]+):|^decompressed chart file "([^"]+)"')
_YAML_LINE_RE = re.compile(r"\byaml: line (\d+):")


class RenderFailure(ChartReviewError):
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
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
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
    """Dependencies the chart declares (in Chart.yaml, or an apiVersion v1 chart's
    requirements.yaml, which Helm's loader reads into the same metadata) that are not under
    charts/: `helm template` refuses such a chart (`found in Chart.yaml, but missing in charts/
    directory`); the SDK would render without."""
    present = {d.get("name") for d in loaded}
    declared = metadata.get("dependencies") or []
    return [str(d.get("name")) for d in declared if d.get("name") not in present]


# What a render failure says when a dependency is not in the chart: the review did not fetch it, so
# nothing of the chart's own could be checked (not a defect of its templates). The words after the
# file that declares it, so that a failure cached before the file was named still matches.
DEPENDENCY_MISSING = "but missing from charts/"


def is_dependency_missing(message: str) -> bool:
    return DEPENDENCY_MISSING in message


def dependency_failure(archive: bytes, names: list[str]) -> RenderFailure:
    """`names` are declared but not under charts/: in requirements.yaml where an apiVersion v1
    chart declares them there (Helm reads it after Chart.yaml), else in Chart.yaml."""
    declaration = re.compile(rf"^\s*-?\s*name:\s*[\"']?{re.escape(names[0])}[\"']?\s*$")
    file, line = "requirements.yaml", _archive_line(archive, "requirements.yaml", declaration)
    if line is None:
        file, line = "Chart.yaml", _archive_line(archive, "Chart.yaml", declaration)
    listed = ", ".join(names)
    what, verb, it = (
        ("dependency", "is", "it") if len(names) == 1 else ("dependencies", "are", "them")
    )
    return RenderFailure(
        f"{what} {listed} {verb} declared in {file} {DEPENDENCY_MISSING} "
        f"(`helm dependency build` fetches {it}; the review renders only what the PR commits)",
        f"{ARCHIVE_ROOT}/{file}",
        line,
    )


def kube_version_failure(archive: bytes, constraint: str, kube_version: str) -> RenderFailure:
    """Helm's refusal of a chart whose `kubeVersion` excludes the version rendered for, in its words."""
    return RenderFailure(
        f"chart requires kubeVersion: {constraint} which is incompatible with Kubernetes "
        f"{kube_version}",
        f"{ARCHIVE_ROOT}/Chart.yaml",
        _chart_yaml_line(archive, re.compile(r"^[\"']?kubeVersion[\"']?\s*:")),
    )


def _chart_yaml_line(archive: bytes, pattern: re.Pattern[str]) -> int | None:
    return _archive_line(archive, "Chart.yaml", pattern)


def _archive_line(archive: bytes, name: str, pattern: re.Pattern[str]) -> int | None:
    """The first line of the chart's file `name` in the archive that `pattern` matches (read only
    on an error path); None without such a file or line."""
    try:
        wanted = members(archive, lambda m: m.path == name and not m.within)
        found = next((m.data for m in wanted if m.data is not None), None)
    except ArchiveRefused:
        return None
    text = found.decode(errors="replace") if found is not None else ""
    for number, line in enumerate(git_lines(text), start=1):
        if pattern.match(line):
            return number
    return None
