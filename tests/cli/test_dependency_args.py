"""`--offline` and `--repository-config` on `chart-review review`, through the command line, with a
real chart repository on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from tests.support.chart_repo import ChartRepo, ChartSpec
from tests.support.gitbuilder import GitBuilder

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-lib\n"


def chart_yaml(repository: str) -> str:
    return (
        "apiVersion: v2\nname: app\nversion: 1.0.0\n"
        f"dependencies:\n  - name: lib\n    version: 1.0.0\n    repository: {repository}\n"
    )


def repo(tmp_path: Path, repository: str) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", chart_yaml(repository)).write("charts/app/values.yaml", "{}\n")
    g.commit("app").branch("pr").write("charts/app/values.yaml", "x: 1\n")
    return g.commit("touch")


def review(g: GitBuilder, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    assert main([*args, "--no-open-prs", "--format", "json", *extra]) in (0, 1)
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def not_reviewed(report: dict[str, object]) -> object:
    (chart,) = report["charts"]  # type: ignore[misc]
    return chart["not_reviewed"]  # type: ignore[index]


def test_offline_fetches_nothing_and_says_the_chart_was_not_reviewed(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    chart_repo.add(ChartSpec("lib", "1.0.0", templates={"cm.yaml": CONFIGMAP}))
    g = repo(tmp_path, chart_repo.url)
    report = review(g, capsys, "--offline")
    assert chart_repo.requests == []
    assert not_reviewed(report) == (
        f"dependency lib 1.0.0 from {chart_repo.url} could not be fetched: fetching is off "
        "(--offline was given) (charts/app/Chart.yaml line 5)"
    )
    # Online, the same review fetches and renders the dependency; offline again, the machine's
    # store still answers.
    assert not_reviewed(review(g, capsys)) is None
    chart_repo.clear_requests()
    assert not_reviewed(review(g, capsys, "--offline")) is None
    assert chart_repo.requests == []


def test_a_repository_name_comes_from_the_repository_config(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.support.chart_repo import BasicAuth

    chart_repo.add(ChartSpec("lib", "1.0.0", templates={"cm.yaml": CONFIGMAP}))
    chart_repo.mode = BasicAuth("bot", "s3cret")
    g = repo(tmp_path, '"@team"')  # quoted, as charts write it: `@` cannot start a YAML scalar
    config = tmp_path / "repositories.yaml"
    config.write_text(
        "apiVersion: v1\nrepositories:\n"
        f"  - name: team\n    url: {chart_repo.url}\n    username: bot\n    password: s3cret\n"
    )
    assert not_reviewed(review(g, capsys, "--repository-config", str(config))) is None
    assert all(r.authorization for r in chart_repo.requests)
    # Without it, `@team` names nothing: said, not guessed.
    report = review(g, capsys, "--cache-dir", str(tmp_path / "renders"))
    assert "the repository name @team is not defined (give --repository-config)" in str(
        not_reviewed(report)
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("repositories: [", "not valid YAML"),
        ("repositories:\n  - url: https://x.example\n", "repositories[0] needs a name and a url"),
        ("name: x\n", "expected a `repositories:` list, as helm writes"),
    ],
)
def test_a_bad_repository_config_exits_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    g = repo(tmp_path, "@team")
    config = tmp_path / "repositories.yaml"
    config.write_text(text)
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr", "--no-open-prs"]
    assert main([*args, "--repository-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"--repository-config {config}: " in err and says in err
