"""How `chart-review review` fetches dependencies from chart repositories, counted at real servers
on 127.0.0.1: one index download per repository and review, a cap on what one chart may have
fetched, no fetch after the first that failed, credentials only for the repository's own origin,
and cleartext only to a registry on a loopback address."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import pytest

from bot.charts.remote import MAX_FETCHED_DEPENDENCIES
from bot.charts.resources import FETCHES_AT_ONCE
from bot.cli.main import main
from tests.support.chart_repo import BasicAuth, ChartRepo, ChartSpec, Status
from tests.support.gitbuilder import GitBuilder
from tests.support.proxy import RecordingProxy

CONFIGMAP = (
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n"
)
USER, SECRET = "corp-bot", "corp-s3cret"
BASIC = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()


def lib(i: int) -> ChartSpec:
    return ChartSpec(f"lib{i}", "1.0.0", templates={"cm.yaml": CONFIGMAP})


def chart_yaml(repository: str, count: int) -> str:
    deps = "".join(
        f"  - name: lib{i}\n    version: 1.0.0\n    repository: {repository}\n"
        for i in range(count)
    )
    return f"apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n{deps}"


def repo(tmp_path: Path, repository: str, count: int, config: str = "") -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    if config:
        g.write(".github/chart-review.yml", config)
    g.write("charts/app/Chart.yaml", chart_yaml(repository, count))
    g.write("charts/app/values.yaml", "{}\n").commit("app")
    return g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")


def review(g: GitBuilder, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr", "--no-open-prs"]
    assert main([*args, "--format", "json"]) in (0, 1)
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def not_reviewed(report: dict[str, object]) -> object:
    (chart,) = report["charts"]  # type: ignore[misc]
    return chart["not_reviewed"]  # type: ignore[index]


def archives(repo: ChartRepo) -> list[str]:
    return [p for p in repo.paths if p.endswith(".tgz")]


# Item 6: one index per repository and review, a cap per chart, no fetch after a failure


def test_a_repository_s_index_is_downloaded_once_per_review(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    count = 12
    chart_repo.add(*(lib(i) for i in range(count)))
    g = repo(tmp_path, chart_repo.url, count)
    assert not_reviewed(review(g, capsys)) is None
    assert chart_repo.paths.count("/index.yaml") == 1
    assert sorted(archives(chart_repo)) == sorted(f"/lib{i}-1.0.0.tgz" for i in range(count))


def test_a_chart_past_the_dependency_cap_is_not_reviewed_and_nothing_is_asked(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    count = MAX_FETCHED_DEPENDENCIES + 1
    g = repo(tmp_path, chart_repo.url, count)
    report = review(g, capsys)
    assert chart_repo.requests == []
    line = 5 + 3 * MAX_FETCHED_DEPENDENCIES  # the first dependency past the cap
    assert not_reviewed(report) == (
        f"charts/app/Chart.yaml declares {count} dependencies to fetch from chart repositories "
        f"and registries; a chart may have at most {MAX_FETCHED_DEPENDENCIES} fetched, so none "
        f"was (commit the others under charts/) (charts/app/Chart.yaml line {line})"
    )


def test_a_repository_that_is_down_is_asked_once(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    count = 12
    chart_repo.add(*(lib(i) for i in range(count)))
    chart_repo.mode = Status(500)
    g = repo(tmp_path, chart_repo.url, count)
    reason = str(not_reviewed(review(g, capsys)))
    assert chart_repo.paths == ["/index.yaml"]
    assert f"failed to fetch {chart_repo.url}/index.yaml: 500 Internal Server Error" in reason


def test_no_dependency_is_fetched_after_the_first_that_failed(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    count = 12
    chart_repo.add(*(lib(i) for i in range(count)))
    for archive in chart_repo.public.glob("*.tgz"):
        archive.unlink()  # indexed, then gone: every archive answers 404
    g = repo(tmp_path, chart_repo.url, count)
    reason = str(not_reviewed(review(g, capsys)))
    assert 1 <= len(archives(chart_repo)) <= FETCHES_AT_ONCE < count
    assert chart_repo.paths.count("/index.yaml") == 1
    assert reason.startswith(f"dependency lib0 1.0.0 from {chart_repo.url} could not be fetched: ")
    assert f"failed to fetch {chart_repo.url}/lib0-1.0.0.tgz: 404 Not Found" in reason


# Item 8: credentials only for the repository's own origin


def corp_config(url: str) -> str:
    return f"dependencies:\n  repositories:\n    - url: {url}\n      name: corp\n"


@pytest.fixture
def corp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HELM_REPO_CORP_USERNAME", USER)
    monkeypatch.setenv("HELM_REPO_CORP_PASSWORD", SECRET)


def other_origin(tmp_path: Path, source: ChartRepo) -> ChartRepo:
    """Another server on another port of the same host, serving the same files anonymously."""
    other = ChartRepo(tmp_path / "other-origin").start()
    for served in source.public.iterdir():
        shutil.copy(served, other.public / served.name)
    return other


@pytest.mark.usefixtures("corp")
def test_archives_the_index_lists_on_another_origin_get_no_credentials(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    chart_repo.add(lib(0), lib(1))
    other = other_origin(tmp_path, chart_repo)
    try:
        chart_repo.index(base_url=other.url)  # as chart-releaser lists GitHub release assets
        chart_repo.mode = BasicAuth(USER, SECRET)
        g = repo(tmp_path, chart_repo.url, 2, corp_config(chart_repo.url))
        assert not_reviewed(review(g, capsys)) is None
        assert sorted((r.path, r.authorization) for r in other.requests) == [
            ("/lib0-1.0.0.tgz", None),
            ("/lib1-1.0.0.tgz", None),
        ]
        assert [(r.path, r.authorization) for r in chart_repo.requests] == [("/index.yaml", BASIC)]
    finally:
        other.stop()


@pytest.mark.usefixtures("corp")
@pytest.mark.parametrize("redirected", ["/index.yaml", "/lib0-1.0.0.tgz"])
def test_a_redirect_to_another_origin_drops_the_credentials(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str], redirected: str
) -> None:
    chart_repo.add(lib(0))
    other = other_origin(tmp_path, chart_repo)
    try:
        chart_repo.redirects[redirected] = f"{other.url}{redirected}"
        chart_repo.mode = BasicAuth(USER, SECRET)
        g = repo(tmp_path, chart_repo.url, 1, corp_config(chart_repo.url))
        assert not_reviewed(review(g, capsys)) is None
        # The file sent elsewhere was fetched there without the credentials; both were asked of
        # the repository with them.
        assert [(r.path, r.authorization) for r in other.requests] == [(redirected, None)]
        assert sorted((r.path, r.authorization) for r in chart_repo.requests) == [
            ("/index.yaml", BASIC),
            ("/lib0-1.0.0.tgz", BASIC),
        ]
    finally:
        other.stop()


# Item 9: cleartext only to a loopback address


@pytest.mark.parametrize(
    ("registry", "line"),
    [
        ("oci://127.example.test/charts", "CONNECT 127.example.test:443 HTTP/1.1"),
        ("oci://localhost.example.test/charts", "CONNECT localhost.example.test:443 HTTP/1.1"),
    ],
)
def test_a_registry_named_like_a_loopback_address_is_spoken_to_over_tls(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    registry: str,
    line: str,
) -> None:
    with RecordingProxy() as proxy:
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
            monkeypatch.setenv(name, proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        g = repo(tmp_path, registry, 1)
        assert not_reviewed(review(g, capsys)) is not None  # the proxy forwards nothing
        assert proxy.lines and set(proxy.lines) == {line}
