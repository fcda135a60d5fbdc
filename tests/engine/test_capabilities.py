"""What Helm would render: `.Capabilities.APIVersions` holds the chart's own CRDs' API versions and
the config's and command line's; `.Capabilities.KubeVersion` follows the config or command line;
a chart whose `kubeVersion` excludes that version does not render. Real repositories, real Helm."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.engine.review import Engine, ReviewInput, ReviewResult
from bot.git.repo import GitRepo
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

CHART = "apiVersion: v2\nname: mon\nversion: 1.0.0\n"
GUARDED = """\
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ .Release.Name }}-mon
spec:
  endpoints: [{port: http}]
{{- end }}
"""
KUBE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube
data:
  version: {{ .Capabilities.KubeVersion.Version | quote }}
"""
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  names: {kind: ServiceMonitor, plural: servicemonitors}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object}}
"""
# A CRD the chart ships in its templates, behind a value, as operators' charts do.
TEMPLATED_CRD = "{{- if .Values.crds }}\n" + CRD + "{{- end }}\n"


class Recording:
    """The embedded renderer, recording what each render was told."""

    def __init__(self) -> None:
        self.inner = EmbeddedHelm()
        self.version = self.inner.version
        self.calls: list[Capabilities] = []

    def render(
        self,
        archive: bytes,
        values: Mapping[str, Any],
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        self.calls.append(capabilities)
        return self.inner.render(archive, values, release, namespace, capabilities)

    def default_kube_version(self) -> str | None:
        return self.inner.default_kube_version()


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    builder = GitBuilder(tmp_path / "repo")
    builder.write("mon/Chart.yaml", CHART).write("mon/values.yaml", "crds: false\n")
    builder.write("mon/templates/servicemonitor.yaml", GUARDED)
    builder.write("mon/templates/kube.yaml", KUBE)
    return builder.commit("mon 1.0.0").branch("pr")


def review(
    g: GitBuilder, renderer: Recording | None = None, cache: RenderCache | None = None, **kw: Any
) -> ReviewResult:
    g.commit("touch")  # a PR commit, so the chart is under review
    engine = Engine(GitRepo(g.path), renderer or Recording(), REGISTRY, cache or RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr", charts=("mon",), **kw))


def kinds(result: ReviewResult, side: str = "head") -> list[str]:
    rendered = result.context.charts[0].side(side)["default"]
    assert rendered.error is None, rendered.error
    return sorted(d.kind for d in rendered.documents)


def kube_version(result: ReviewResult) -> str:
    docs = result.context.charts[0].head["default"].documents
    return str(next(d for d in docs if d.kind == "ConfigMap").body["data"]["version"])


def test_without_the_api_version_the_guarded_template_renders_nothing(g: GitBuilder) -> None:
    assert kinds(review(g)) == ["ConfigMap"]


def test_the_charts_own_crds_dir_defines_the_api_version(g: GitBuilder) -> None:
    g.write("mon/crds/servicemonitors.yaml", CRD)
    result = review(g)
    assert kinds(result) == ["ConfigMap", "ServiceMonitor"]
    assert kinds(result, "base") == ["ConfigMap"]  # the CRD came with the PR


def test_an_unpacked_subcharts_crds_count(g: GitBuilder) -> None:
    g.write("mon/charts/ops/Chart.yaml", "apiVersion: v2\nname: ops\nversion: 0.1.0\n")
    g.write("mon/charts/ops/crds/sm.yaml", CRD)
    assert kinds(review(g)) == ["ConfigMap", "ServiceMonitor"]


def test_a_vendored_subcharts_crds_count(g: GitBuilder) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in {
            "ops/Chart.yaml": "apiVersion: v2\nname: ops\nversion: 0.1.0\n",
            "ops/crds/sm.yaml": CRD,
        }.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    (g.path / "mon/charts").mkdir(parents=True)
    (g.path / "mon/charts/ops-0.1.0.tgz").write_bytes(buffer.getvalue())
    assert kinds(review(g)) == ["ConfigMap", "ServiceMonitor"]


def test_a_crd_the_templates_render_is_there_on_a_second_pass(g: GitBuilder) -> None:
    g.write("mon/templates/crd.yaml", TEMPLATED_CRD).write("mon/values.yaml", "crds: true\n")
    renderer = Recording()
    result = review(g, renderer)
    assert kinds(result) == ["ConfigMap", "CustomResourceDefinition", "ServiceMonitor"]
    head_calls = [c for c in renderer.calls if c.api_versions]
    assert head_calls == [
        Capabilities(None, ("monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor"))
    ]


def test_no_second_pass_when_the_templates_define_no_crd(g: GitBuilder) -> None:
    g.write("mon/templates/crd.yaml", TEMPLATED_CRD)  # values keep crds: false
    renderer = Recording()
    assert kinds(review(g, renderer)) == ["ConfigMap"]
    assert renderer.calls == [DEFAULT_CAPABILITIES, DEFAULT_CAPABILITIES]  # base and head, once


def test_crds_add_nothing_when_no_template_asks_for_api_versions(g: GitBuilder) -> None:
    g.remove("mon/templates/servicemonitor.yaml").write("mon/crds/sm.yaml", CRD)
    renderer = Recording()
    review(g, renderer)
    # Nothing could change the render: the cache key stays the one without capabilities.
    assert renderer.calls == [DEFAULT_CAPABILITIES, DEFAULT_CAPABILITIES]


def test_the_configs_api_versions_are_there(g: GitBuilder) -> None:
    g.checkout("develop")
    g.write(".github/chart-review.yml", "api_versions: [monitoring.coreos.com/v1]\n")
    g.commit("config").checkout("pr").merge("develop")
    result = review(g)
    assert kinds(result) == ["ConfigMap", "ServiceMonitor"]
    assert result.report.charts[0].extra["capabilities"]["api_versions"] == [
        "monitoring.coreos.com/v1"
    ]


def test_the_inputs_api_versions_replace_the_configs(g: GitBuilder) -> None:
    g.checkout("develop").write(".github/chart-review.yml", "api_versions: [other.io/v1]\n")
    g.commit("config").checkout("pr").merge("develop")
    result = review(g, api_versions=("monitoring.coreos.com/v1",))
    assert kinds(result) == ["ConfigMap", "ServiceMonitor"]
    assert result.report.charts[0].extra["capabilities"]["api_versions"] == [
        "monitoring.coreos.com/v1"
    ]


def test_kube_version_follows_the_config_and_the_input_over_it(g: GitBuilder) -> None:
    g.checkout("develop").write(".github/chart-review.yml", 'kube_version: "1.29"\n')
    g.commit("config").checkout("pr").merge("develop")
    configured = review(g)
    assert kube_version(configured) == "v1.29.0"
    assert configured.report.charts[0].extra["capabilities"] == {
        "kube_version": "v1.29.0",
        "kube_version_default": False,
        "api_versions": [],
    }
    assert kube_version(review(g, kube_version="v1.31.2")) == "v1.31.2"


def test_the_report_names_helms_default_kube_version_when_none_is_given(g: GitBuilder) -> None:
    result = review(g)
    assumed = result.report.charts[0].extra["capabilities"]
    assert assumed["kube_version_default"] is True
    assert assumed["kube_version"] == kube_version(result)  # what the templates saw
    assert result.report.to_json()["charts"][0]["capabilities"] == assumed


def test_a_kube_version_the_chart_excludes_is_a_render_error_naming_the_constraint(
    g: GitBuilder,
) -> None:
    g.write("mon/Chart.yaml", CHART + 'kubeVersion: ">=1.30.0-0"\n')
    result = review(g, kube_version="v1.29.0")
    error = result.context.charts[0].head["default"].error
    assert error is not None
    assert error.message == (
        "chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes v1.29.0"
    )
    assert (error.template, error.line) == ("mon/Chart.yaml", 4)
    assert kinds(review(g, kube_version="v1.30.1")) == ["ConfigMap"]


def test_helms_default_kube_version_is_checked_against_kube_version_too(g: GitBuilder) -> None:
    g.write("mon/Chart.yaml", CHART + 'kubeVersion: "<1.20.0"\n')
    error = review(g).context.charts[0].head["default"].error
    assert error is not None and "chart requires kubeVersion: <1.20.0" in error.message


def test_other_api_versions_are_not_served_from_the_cache(g: GitBuilder) -> None:
    g.write("mon/values.yaml", "crds: false\nreplicas: 2\n")  # base and head differ
    renderer, cache = Recording(), RenderCache()
    assert kinds(review(g, renderer, cache)) == ["ConfigMap"]
    assert len(renderer.calls) == 2
    with_api = review(g, renderer, cache, api_versions=("monitoring.coreos.com/v1",))
    assert kinds(with_api) == ["ConfigMap", "ServiceMonitor"]
    assert len(renderer.calls) == 4  # base and head rendered again, not served from the cache
    again = review(g, renderer, cache, api_versions=("monitoring.coreos.com/v1",))
    assert kinds(again) == ["ConfigMap", "ServiceMonitor"]
    assert len(renderer.calls) == 4  # the same chart trees and API versions: from the cache


def test_a_charts_files_are_read_once_per_tree(
    g: GitBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chart's files, `.helmignore` applied, depend on its directory's tree alone: a commit
    # that leaves the chart as it was reads none of them again (nor does the next PR's base).
    from bot.charts import crds

    g.write("mon/crds/servicemonitors.yaml", CRD).write("mon/.helmignore", "*.md\n")
    g.write("mon/README.md", "# mon\n")
    first = g.commit("crds").sha("pr")
    second = g.write("other.txt", "x\n").commit("elsewhere").sha("pr")
    git = GitRepo(g.path)
    found = crds._chart_entries(git.tree(first), "mon")
    assert "crds/servicemonitors.yaml" in found and "README.md" not in found
    asked: list[str] = []
    monkeypatch.setattr(crds, "ignored", lambda rel, rules: asked.append(rel) or False)
    assert crds._chart_entries(git.tree(second), "mon") == found and not asked
