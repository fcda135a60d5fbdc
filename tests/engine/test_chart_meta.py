"""A chart's metadata as Helm's loader reads it: Chart.yaml, then an apiVersion v1 chart's
requirements.yaml, whose `dependencies:` replace Chart.yaml's."""

from __future__ import annotations

from pathlib import Path

from bot.git.repo import GitRepo
from bot.model.chart_files import ChartMeta, Dependency, read_chart_meta
from tests.support.gitbuilder import GitBuilder

CHART = "apiVersion: v1\nname: datadog\nversion: 3.240.0\n"
REQUIREMENTS = (
    "dependencies:\n"
    "  - name: datadog-crds\n    version: 2.23.0\n    repository: https://helm.datadoghq.com\n"
    "  - name: kube-state-metrics\n    version: '=2.13.2'\n"
    "    repository: https://prometheus-community.github.io/helm-charts\n"
)


def meta_of(tmp_path: Path, files: dict[str, str]) -> ChartMeta | None:
    g = GitBuilder(tmp_path / "repo")
    for path, text in files.items():
        g.write(path, text)
    g.commit("chart")
    return read_chart_meta(GitRepo(g.path).tree("develop"), "charts/datadog")


def test_requirements_yaml_declares_a_v1_chart_s_dependencies(tmp_path: Path) -> None:
    meta = meta_of(
        tmp_path,
        {"charts/datadog/Chart.yaml": CHART, "charts/datadog/requirements.yaml": REQUIREMENTS},
    )
    assert meta is not None
    assert meta.dependencies == ("datadog-crds", "kube-state-metrics")
    assert meta.requirements[1] == Dependency(
        "kube-state-metrics", "https://prometheus-community.github.io/helm-charts", "=2.13.2"
    )
    assert meta.requirements_file == "charts/datadog/requirements.yaml"
    assert meta.version == "3.240.0"


def test_a_requirements_yaml_without_dependencies_leaves_chart_yaml_s(tmp_path: Path) -> None:
    chart = CHART + "dependencies:\n  - name: common\n    repository: file://../common\n"
    for requirements in ("# nothing yet\n", "other: 1\n", "dependencies: [\n"):
        meta = meta_of(
            tmp_path / str(len(requirements)),
            {"charts/datadog/Chart.yaml": chart, "charts/datadog/requirements.yaml": requirements},
        )
        assert meta is not None
        assert (meta.dependencies, meta.requirements_file) == (("common",), None), requirements


def test_without_requirements_yaml_chart_yaml_declares(tmp_path: Path) -> None:
    meta = meta_of(tmp_path, {"charts/datadog/Chart.yaml": CHART})
    assert meta is not None and (meta.dependencies, meta.requirements_file) == ((), None)
