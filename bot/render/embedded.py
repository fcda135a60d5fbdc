"""Helm's Go SDK in this process (helm-python-sdk). The sandbox runs it in child processes; the
demo and the tests of exact Helm behaviour call it directly. It renders and, as `ct lint` does per
values file, lints (bot/render/lint.py)."""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping
from typing import Any

from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.kube.constraint import satisfies
from bot.render.base import (
    RenderFailure,
    dependency_failure,
    failure_from_message,
    kube_version_failure,
    missing_dependencies,
    values_json,
)
from bot.render.expanded import ExpandedCharts
from bot.render.lint import LINT_VERSION, Linted, LintEntry, lint_archive
from bot.render.probe import probe_kube_version


class EmbeddedHelm:
    """Helm's Go SDK in-process (helm-python-sdk): exact Helm semantics, no binary."""

    def __init__(self) -> None:
        import helm_python

        self._helm = helm_python
        self.version = f"helm-python-sdk/{helm_python.__version__} {LINT_VERSION}"
        self._default: str | None = None
        # Each side's archive unpacked once for its lints; removed with this renderer, or at exit.
        self._expanded = ExpandedCharts(helm_python)
        weakref.finalize(self, self._expanded.close)

    def render(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        try:
            with self._helm.Chart.load_archive(archive) as chart:
                metadata = chart.metadata
                if metadata.get("dependencies"):
                    missing = missing_dependencies(metadata, chart.dependencies)
                    if missing:
                        raise dependency_failure(archive, missing)
                self._check_kube_version(archive, metadata, capabilities)
                return self._render(chart, values, release, namespace, capabilities)
        except self._helm.HelmError as exc:
            raise failure_from_message(str(exc)) from None

    def render_linted(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> Linted:
        try:
            manifests = self.render(archive, values, release, namespace, capabilities)
        except RenderFailure as failure:
            # Linted all the same: what lint says beyond the render's failure (Chart.yaml, values)
            # is still the chart's.
            return Linted(None, failure, self.lint(archive, values, namespace, capabilities))
        return Linted(manifests, None, self.lint(archive, values, namespace, capabilities))

    def lint_alone(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> Linted:
        """The lint alone, of a render made before (bot/render/lint.py's `lint_alone`)."""
        return Linted(None, None, self.lint(archive, values, namespace, capabilities))

    def lint(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> tuple[LintEntry, ...]:
        """`helm lint` of the archive with these values (a temp file under TMPDIR)."""
        return lint_archive(
            self._helm, archive, values, namespace, capabilities.kube_version, self._expanded
        )

    def _render(
        self,
        chart: Any,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities,
    ) -> dict[str, str]:
        # The SDK's `Chart.render` takes no kube or API versions, but the render call beneath it
        # does (`kube_version`, `api_versions`, as `helm template` passes them): called directly.
        opts: dict[str, Any] = {"name": release, "namespace": namespace, "is_install": True}
        if capabilities.kube_version is not None:
            opts["kube_version"] = capabilities.kube_version
        if capabilities.api_versions:
            opts["api_versions"] = list(capabilities.api_versions)
        rendered = self._helm._native.call_string(
            "helm_render", chart._raw(), values_json(values), json.dumps(opts)
        )
        manifests: dict[str, str] = json.loads(rendered)
        return manifests

    def _check_kube_version(
        self, archive: bytes, metadata: Mapping[str, Any], capabilities: Capabilities
    ) -> None:
        """`helm template` and `helm install` refuse a chart whose `kubeVersion` excludes the
        version rendered for; the SDK's render does not check, so it is checked here."""
        constraint = metadata.get("kubeVersion")
        if not constraint:
            return
        kube_version = capabilities.kube_version or self.default_kube_version()
        if kube_version is not None and not satisfies(kube_version, str(constraint)):
            raise kube_version_failure(archive, str(constraint), kube_version)

    def default_kube_version(self) -> str | None:
        """Helm's compiled-in Kubernetes version (what `.Capabilities.KubeVersion` is unless told)."""
        if self._default is None:
            self._default = probe_kube_version(self.render)
        return self._default
