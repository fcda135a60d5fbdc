"""`chart-review render` and `list-changed`: what the bot renders and which charts it picks, as
`helm template` and `ct list-changed` print them, on real repositories and real renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

EQUAL = """---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {release}-app
spec:
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
      - name: app
        image: example/app:1
        resources:
          limits:
            cpu: 100m
            memory: 64Mi
          requests:
            cpu: 100m
            memory: 64Mi
"""
# Identical containers in one object parse to one shared mapping (bot/model/yaml/blocks.py):
# written out whole, never as YAML anchors and aliases.
TWINS = """apiVersion: v1
kind: Pod
metadata:
  name: twins
spec:
  initContainers:
  - name: twin
    image: example/twin:1
  containers:
  - name: twin
    image: example/twin:1
"""


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    return g


def render(repo: GitBuilder, *args: str) -> int:
    return main(["render", "--repo", str(repo.path), "--ref", "develop", "--chart", "app", *args])


def test_render_prints_the_profile_as_helm_template_does(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render(repo, "--profile", "equal") == 0
    assert capsys.readouterr().out == EQUAL.format(release="release")  # no NOTES.txt


def test_render_uses_the_profile_values_and_the_config(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write(".github/chart-review.yml", "release_name: web\n").commit("config")
    assert render(repo, "--profile", "burst") == 0
    out = capsys.readouterr().out
    assert "  name: web-app\n" in out  # the config's release name, as the review renders
    # burst sets no cpu limit: the chart's defaults alone.
    assert "resources:\n          limits:\n            memory: 64Mi\n          requests:\n" in out


def test_render_writes_shared_parts_whole(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("app/templates/twins.yaml", TWINS).commit("twins")
    assert render(repo, "--profile", "equal") == 0
    out = capsys.readouterr().out
    assert "---\n# Source: app/templates/twins.yaml\n" + TWINS in out
    assert "&id" not in out and "*id" not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--profile", "gke"],
            "--profile gke: chart app has no such profile at develop (it has burst, equal)",
        ),
        ([], "--profile: chart app has profiles burst, equal at develop; name one"),
        (["--chart", "nope", "--profile", "equal"], "--chart nope: no Chart.yaml there at develop"),
        (["--ref", "nowhere", "--profile", "equal"], "--ref 'nowhere' is not a commit in"),
    ],
)
def test_render_names_what_it_cannot_find(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert render(repo, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("chart-review: error: ") and message in err


def test_render_of_a_broken_template_says_where_and_exits_1(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write("app/templates/broken.yaml", "x: {{ .Values.a.b }}\n").commit("break")
    assert render(repo, "--profile", "equal") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("chart-review: app does not render on profile equal: ")
    assert "app/templates/broken.yaml:1" in captured.err


def test_render_takes_values_files_and_set_as_review_does(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    limits = tmp_path / "limits.yaml"
    limits.write_text("resources:\n  limits:\n    cpu: 250m\n")
    # The file merges over the profile's values, then --set, then --set-string win, helm's order.
    args = ("--profile", "burst", "-f", str(limits), "--set", "resources.requests.cpu=50m")
    assert render(repo, *args, "--set-string", "resources.requests.memory=32Mi") == 0
    out = capsys.readouterr().out
    assert (
        "          limits:\n            cpu: 250m\n            memory: 64Mi\n"
        "          requests:\n            cpu: 50m\n            memory: 32Mi\n"
    ) in out


def test_render_exits_2_naming_a_set_helm_cannot_parse(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert render(repo, "--profile", "equal", "--set", "resources.limits") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "chart-review: error: --set 'resources.limits': key \"limits\" has no value"
    )


CT_YAML = "chart-dirs:\n  - charts\nexcluded-charts:\n  - skipped\n"


def chart(g: GitBuilder, path: str, name: str) -> GitBuilder:
    return g.write(f"{path}/Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 1.0.0\n").write(
        f"{path}/values.yaml", "a: 1\n"
    )


def list_changed(g: GitBuilder, capsys: pytest.CaptureFixture[str], head: str = "pr") -> str:
    assert main(["list-changed", "--repo", str(g.path), "--base", "develop", "--head", head]) == 0
    return capsys.readouterr().out


def test_list_changed_follows_ct_yaml_from_the_merge_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = GitBuilder(tmp_path / "ct")
    g.write("ct.yaml", CT_YAML)
    for name in ("a", "b", "gone", "skipped"):
        chart(g, f"charts/{name}", name)
    chart(g, "charts/a/tests/fixture", "fixture")  # deeper than ct's charts: not a chart
    g.commit("charts")
    g.branch("pr")
    g.write("charts/a/values.yaml", "a: 2\n").write("charts/a/tests/fixture/values.yaml", "a: 3\n")
    g.write("charts/skipped/values.yaml", "a: 2\n").write("docs/x.md", "x\n")
    g.remove("charts/gone/Chart.yaml").remove("charts/gone/values.yaml").commit("pr")
    # develop moves on after the PR branched: its own change is not the PR's.
    g.checkout("develop").write("charts/b/values.yaml", "a: 2\n").commit("b")
    assert list_changed(g, capsys) == "charts/a\n"


def test_list_changed_without_ct_yaml_takes_every_chart(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = GitBuilder(tmp_path / "plain")
    chart(chart(g, "top", "top"), "deep/nested/c", "c").commit("charts")
    g.branch("pr").write("deep/nested/c/values.yaml", "a: 2\n").write("top/values.yaml", "b: 1\n")
    g.commit("both")
    assert list_changed(g, capsys) == "deep/nested/c\ntop\n"
    assert list_changed(g, capsys, head="develop") == ""


def test_list_changed_names_an_unknown_ref(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["list-changed", "--repo", str(repo.path), "--base", "nope"]) == 2
    assert "--base 'nope' is not a commit in" in capsys.readouterr().err
