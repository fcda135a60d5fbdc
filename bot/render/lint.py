"""`helm lint` beside the render, as chart-testing's `ct lint` runs it per values file: Helm's
messages as values, and the renderers that can lint (`LintingRenderer`).

Lint renders the templates again, so it runs where renders run: in the sandbox's render processes
(bot/render/child.py), in the same request as the render, so the archive travels once and both are
cached together. Helm's lint takes a file path, not bytes: the archive is written to a private
directory that only this process may write (the render process's scratch directory, which its
confinement allows), linted and removed."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol, TypeGuard, runtime_checkable

from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.render.base import Renderer, RenderFailure, values_json
from bot.render.expanded import ExpandedCharts

# What the lint of an archive extracts into (Helm's own temp directory, under TMPDIR): its path is
# in some messages and differs between two lints of the same chart.
_EXTRACTED_RE = re.compile(r"/[^\s\"']*/helm-lint\d+/[^/\s\"':]+/?")
# The archive's file name in the scratch directory; Helm names it in a load error.
ARCHIVE_NAME = "chart.tgz"
# In the version of every renderer that lints, so in the render cache's key: a render cached before
# it linted is not read as one lint found clean. Bumped when what lint reports changes.
LINT_VERSION = "lint/1"
LINT_UNFINISHED = "helm lint did not finish: {reason}"


class LintSeverity(IntEnum):
    """Helm's `support.Severity`, as helm-python-sdk's `lint` reports it."""

    UNKNOWN = 0
    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def of(cls, value: object) -> LintSeverity:
        """A severity from Helm's number; one this code does not know is UNKNOWN."""
        try:
            return cls(int(value))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return cls.UNKNOWN


@dataclass(frozen=True)
class LintEntry:
    """One message of `helm lint`, as Helm says it: `path` is relative to the chart root
    (`templates/d.yaml`, `Chart.yaml`, `templates/` for the templates rule), empty for the chart
    itself."""

    severity: LintSeverity
    path: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"severity": int(self.severity), "path": self.path, "message": self.message}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> LintEntry:
        severity = LintSeverity.of(data["severity"])
        return LintEntry(severity, str(data["path"]), str(data["message"]))


@dataclass(frozen=True)
class Linted:
    """One request's outcome: the manifests or why not, and the lint's messages (None: not linted,
    because the renderer cannot or because a limit stopped the process first). `transient`: a part
    ended on something that may not recur (the wall clock under load), so it is not cached."""

    manifests: Mapping[str, str] | None
    error: RenderFailure | None
    lint: tuple[LintEntry, ...] | None
    transient: bool = False


@runtime_checkable
class LintingRenderer(Protocol):
    version: str

    def render_linted(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> Linted:
        """Render, then lint with the same values. Never raises RenderFailure: it is in `error`."""
        ...


def can_lint(renderer: object) -> TypeGuard[LintingRenderer]:
    """`isinstance(renderer, LintingRenderer)`, remembered by the renderer's type: a protocol's
    isinstance looks up each of its members by name, and it is asked at every render."""
    kind = type(renderer)
    found = _LINTING.get(kind)
    if found is None:
        found = _LINTING[kind] = isinstance(renderer, LintingRenderer)
    return found


_LINTING: dict[type, bool] = {}


def render_and_lint(
    renderer: Renderer,
    archive: bytes,
    values: Mapping[str, Any],
    release: str,
    namespace: str,
    capabilities: Capabilities | None = None,
    lint: bool = True,
) -> Linted:
    """Through `render_linted` when asked to lint and the renderer can; else the render alone,
    lint None."""
    extra = (capabilities,) if capabilities is not None else ()
    if lint and can_lint(renderer):
        return renderer.render_linted(archive, values, release, namespace, *extra)
    try:
        return Linted(renderer.render(archive, values, release, namespace, *extra), None, None)
    except RenderFailure as failure:
        return Linted(None, failure, None, transient=failure.transient)


def lint_alone(
    renderer: LintingRenderer,
    archive: bytes,
    values: Mapping[str, Any],
    release: str,
    namespace: str,
    capabilities: Capabilities | None = None,
) -> Linted:
    """`helm lint` of a render already made (manifests None): without rendering again where the
    renderer can (`lint_alone`), else through `render_linted`, its render dropped."""
    extra = (capabilities,) if capabilities is not None else ()
    alone = getattr(renderer, "lint_alone", None)
    if alone is not None:
        linted: Linted = alone(archive, values, release, namespace, *extra)
        return linted
    out = renderer.render_linted(archive, values, release, namespace, *extra)
    return Linted(None, None, out.lint, out.transient)


def unfinished(failure: RenderFailure) -> tuple[LintEntry, ...] | None:
    """A lint a limit stopped (the render before it passed). Stopped by what would stop it again
    (CPU, memory): the chart's doing, a warning, short of an error since its render passed; by the
    wall clock under load (transient): unknown, so not linted."""
    if failure.transient:
        return None
    return (LintEntry(LintSeverity.WARNING, "", LINT_UNFINISHED.format(reason=failure.message)),)


def lint_archive(
    helm: Any,
    archive: bytes,
    values: Mapping[str, Any],
    namespace: str,
    kube_version: str | None,
    expanded: ExpandedCharts | None = None,
) -> tuple[LintEntry, ...]:
    """helm-python-sdk's `chart.lint` of the chart: from its directory where `expanded` has the
    archive unpacked (once per side, bot/render/expanded.py), else of the archive, written to a
    private temp directory (under TMPDIR: the render process's scratch directory) and removed
    after."""
    if expanded is not None:
        with expanded.directory(archive) as directory:
            if directory is not None:
                return _lint_directory(helm, directory, values, namespace, kube_version)
    with tempfile.TemporaryDirectory(prefix="lint-") as scratch:
        path = os.path.join(scratch, ARCHIVE_NAME)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(archive)
        try:
            # As the render gets them: YAML's dates as their text (values_json).
            plain = json.loads(values_json(values))
            report = helm.chart.lint(path, plain, namespace=namespace, kube_version=kube_version)
        except helm.HelmError as exc:  # malformed input, not a lint finding: said as an error
            return (LintEntry(LintSeverity.ERROR, "", _clean(str(exc), scratch)),)
    return entries_from_report(report, scratch)


def _lint_directory(
    helm: Any, directory: str, values: Mapping[str, Any], namespace: str, kube_version: str | None
) -> tuple[LintEntry, ...]:
    plain = json.loads(values_json(values))  # as the render gets them (values_json)
    try:
        report = helm.chart.lint(directory, plain, namespace=namespace, kube_version=kube_version)
    except helm.HelmError as exc:
        return (LintEntry(LintSeverity.ERROR, "", _clean(str(exc), directory)),)
    return entries_from_report(report, directory)


def entries_from_report(report: Mapping[str, Any], scratch: str) -> tuple[LintEntry, ...]:
    """Helm's messages, and the errors no message carries (a chart that does not load is only an
    `errors` item), with the temp paths taken out."""
    out = []
    for raw in report.get("messages") or ():
        path = str(raw.get("path") or "")
        if path.startswith("/"):  # the extracted chart's own directory: the chart itself
            path = ""
        message = _clean(raw.get("error"), scratch)
        out.append(LintEntry(LintSeverity.of(raw.get("severity")), path, message))
    said = {str(raw.get("error")) for raw in report.get("messages") or ()}
    for error in report.get("errors") or ():
        if str(error) not in said:
            out.append(LintEntry(LintSeverity.ERROR, "", _clean(error, scratch)))
    return tuple(out)


def _clean(text: object, scratch: str) -> str:
    cleaned = _EXTRACTED_RE.sub("", str(text or ""))
    return cleaned.replace(os.path.join(scratch, ARCHIVE_NAME), ARCHIVE_NAME).strip()
