"""`--renderer helm`: the same review through a `helm` executable on PATH. No helm binary can be
installed here, so tests/support/helm_cli.py stands in for it: Helm's own SDK behind helm's command line
and output conventions, run as a real subprocess by bot.render.helm_cli.HelmCLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.render.base import RenderFailure
from bot.render.helm_cli import HelmCLI
from tests.support.app_scenario import with_init
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

TEMPLATE = "app/templates/deployment.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr")
    g.write(TEMPLATE, with_init(chart_files()[TEMPLATE]))  # the equal profile turns Burstable
    return g.commit("wait for mysql")


def _report(repo: GitBuilder, tmp_path: Path, renderer: str) -> dict[str, object]:
    out = tmp_path / f"{renderer}.json"
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", "pr"]
    main([*args, "--renderer", renderer, "--format", "json", "--output", str(out)])
    report = json.loads(out.read_text())
    return {"charts": report["charts"], "findings": report["findings"]}


def test_the_helm_binary_reviews_exactly_as_the_embedded_sdk(
    helm_on_path: Path, repo: GitBuilder, tmp_path: Path
) -> None:
    via_cli = _report(repo, tmp_path, "helm")
    assert via_cli == _report(repo, tmp_path, "embedded")
    assert via_cli["findings"], "the scenario has something to find"


def test_a_template_error_through_the_binary_names_template_and_line(
    helm_on_path: Path, repo: GitBuilder, tmp_path: Path
) -> None:
    repo.write("app/templates/broken.yaml", "a: {{ .Values.nope.deeper }}\n").commit("break")
    report = _report(repo, tmp_path, "helm")
    [finding] = [
        f
        for f in report["findings"]  # type: ignore[union-attr]
        if f["check"] == "render" and f["rule"] != "not-reviewed"  # type: ignore[index]
    ]
    assert finding["severity"] == "failure"
    assert "app/templates/broken.yaml" in finding["message"] and finding["line"] == 1


def test_no_helm_on_path_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RenderFailure, match="no 'helm' binary on PATH"):
        HelmCLI()


def test_kube_and_api_versions_reach_the_binary(
    helm_on_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--kube-version` and `--api-versions` through `helm template`: what the templates see, and a
    chart whose kubeVersion excludes the version refused in helm's words."""
    g = GitBuilder(tmp_path / "caps")
    g.write("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\nkubeVersion: '>=1.28.0-0'\n")
    seen = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: seen\ndata:\n"
        "  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n"
        '  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}\n'
    )
    g.write("c/templates/seen.yaml", seen).commit("c")
    render = ["render", "--repo", str(g.path), "--ref", "develop", "--chart", "c"]
    flags = ["--kube-version", "1.29", "--api-versions", "monitoring.coreos.com/v1"]
    assert main([*render, "--renderer", "helm", *flags]) == 0
    via_cli = capsys.readouterr().out
    assert "kube: v1.29.0" in via_cli and "monitoring: 'true'" in via_cli
    assert main([*render, "--renderer", "embedded", *flags]) == 0
    assert capsys.readouterr().out == via_cli
    assert main([*render, "--renderer", "helm", "--kube-version", "1.27"]) == 1
    assert (
        "chart requires kubeVersion: >=1.28.0-0 which is incompatible with Kubernetes v1.27.0"
        in capsys.readouterr().err
    )
