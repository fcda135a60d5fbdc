"""Charts whose dependencies come from a chart repository or an OCI registry are rendered with
them, as `helm dependency build` then `helm template` would: against a real chart repository
and a real registry on 127.0.0.1, through helm-python-sdk's own downloader."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.report import Report, Severity
from bot.render.cache import RenderCache
from bot.render.deps.fetcher import FetchLimits, HelmFetcher
from bot.render.deps.request import DependencyRequest
from bot.render.deps.store import DependencyStore
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.chart_repo import ChartRepo, ChartSpec, Hang, package_chart
from tests.support.gitbuilder import GitBuilder
from tests.support.oci_registry import HangingServer, OciRegistry

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-redis
spec:
  selector:
    matchLabels: {app: redis}
  template:
    metadata:
      labels: {app: redis}
    spec:
      containers:
        - name: redis
          image: redis:7
          resources: {{ toJson .Values.resources }}
"""
GUARANTEED = {
    "resources": {
        "requests": {"cpu": "1", "memory": "1Gi"},
        "limits": {"cpu": "1", "memory": "1Gi"},
    }
}
BEST_EFFORT: dict[str, object] = {"resources": {}}


def redis(version: str, values: dict[str, object] = GUARANTEED) -> ChartSpec:
    return ChartSpec("redis", version, templates={"deployment.yaml": DEPLOYMENT}, values=values)


def app_chart(repository: str, version: str = "17.3.0", chart_version: str = "1.0.0") -> str:
    return (
        f"apiVersion: v2\nname: app\nversion: {chart_version}\n"
        f"dependencies:\n  - name: redis\n    version: {version}\n    repository: {repository}\n"
    )


def repo_with(tmp_path: Path, chart_yaml: str) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", chart_yaml).write("charts/app/values.yaml", "{}\n")
    return g.commit("app")


def review(g: GitBuilder, fetcher: HelmFetcher | None = None, offline: bool = False) -> Report:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache(), fetcher)
    return engine.review(ReviewInput(base="develop", head="pr", offline=offline)).report


def pods(report: Report) -> set[str]:
    return {f.subject or "" for f in report.findings if f.check == "qos"}


def rendered_kinds(g: GitBuilder, fetcher: HelmFetcher) -> list[str]:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache(), fetcher)
    result = engine.review(ReviewInput(base="develop", head="pr", all_charts=True))
    (chart,) = result.context.charts
    rendered = chart.head["default"]
    assert rendered.error is None, rendered.error
    return [f"{d.kind}/{d.name}@{d.template}" for d in rendered.documents]


def test_a_chart_repository_dependency_is_fetched_and_rendered(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    chart_repo.add(redis("17.3.0"))
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    fetcher = HelmFetcher()
    assert rendered_kinds(g, fetcher) == [
        "Deployment/release-redis@charts/app/charts/redis/templates/deployment.yaml"
    ]
    assert "/redis-17.3.0.tgz" in chart_repo.paths
    # The same version again, in another review: from the machine's store, no request at all.
    chart_repo.clear_requests()
    other = HelmFetcher(DependencyStore())
    assert len(rendered_kinds(g, other)) == 1
    assert (chart_repo.paths, other.requests) == ([], 0)


def test_an_oci_dependency_is_fetched_and_rendered(
    tmp_path: Path, oci_registry: OciRegistry
) -> None:
    oci_registry.push(package_chart(redis("17.3.0"), tmp_path / "dist", tmp_path / "src"))
    g = repo_with(tmp_path, app_chart(oci_registry.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    assert len(rendered_kinds(g, HelmFetcher())) == 1
    assert oci_registry.blob_gets() >= 1
    before = oci_registry.blob_gets()
    assert len(rendered_kinds(g, HelmFetcher())) == 1
    assert oci_registry.blob_gets() == before  # the store answered


def test_a_repository_only_the_head_names_is_refused_unasked(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    """The allow-list is the base's: a PR cannot point the bot at a host of its choosing."""
    chart_repo.add(redis("17.3.0"))
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n").commit("app")
    g.branch("pr").write("charts/app/Chart.yaml", app_chart(chart_repo.url, chart_version="1.0.1"))
    report = review(g.commit("add redis"))
    assert chart_repo.requests == []
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.severity is Severity.WARNING
    assert unreviewed.title == (
        f"charts/app: not reviewed: dependency redis 17.3.0 from {chart_repo.url} could not be "
        f"fetched: {chart_repo.url} is not among the repositories the base's Chart.yaml files "
        "name (set dependencies.repositories in .github/chart-review.yml to allow more); not "
        "fetched"
    )
    assert not report.failed


def test_the_configured_list_allows_a_new_repository(tmp_path: Path, chart_repo: ChartRepo) -> None:
    chart_repo.add(redis("17.3.0"))
    g = GitBuilder(tmp_path / "repo")
    g.write(
        ".github/chart-review.yml", f"dependencies:\n  repositories:\n    - url: {chart_repo.url}\n"
    )
    g.write("charts/app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n").commit("app")
    g.branch("pr").write("charts/app/Chart.yaml", app_chart(chart_repo.url, chart_version="1.0.1"))
    report = review(g.commit("add redis"))
    assert [f.rule for f in report.findings if f.check == "render"] == []
    assert "/redis-17.3.0.tgz" in chart_repo.paths


def test_offline_is_not_reviewed_never_a_pass(tmp_path: Path, chart_repo: ChartRepo) -> None:
    chart_repo.add(redis("17.3.0"))
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g, offline=True)
    assert chart_repo.requests == []
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title == (
        f"charts/app: not reviewed: dependency redis 17.3.0 from {chart_repo.url} could not be "
        "fetched: fetching is off (--offline was given)"
    )
    assert report.charts[0].not_reviewed is not None
    # The same from the config (read at base), which says so.
    g = GitBuilder(tmp_path / "configured")
    g.write(".github/chart-review.yml", "dependencies:\n  offline: true\n")
    g.write("charts/app/Chart.yaml", app_chart(chart_repo.url)).commit("app")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g)
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title.endswith("fetching is off (dependencies.offline is set in the config)")
    assert chart_repo.requests == []


def test_a_lock_out_of_sync_with_chart_yaml_fails_as_helm_would(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    chart_repo.add(redis("17.3.0"), redis("18.1.2"))
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    lock = (
        f"dependencies:\n- name: redis\n  repository: {chart_repo.url}\n  version: 17.3.0\n"
        "digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
        'generated: "2026-01-01T00:00:00Z"\n'
    )
    g.branch("pr").write("charts/app/Chart.lock", lock).commit("a hand-made lock")
    report = review(g)
    (failure,) = [f for f in report.findings if f.check == "render" and f.severity == "failure"]
    assert failure.rule == "head-fails"
    assert failure.path == "charts/app/Chart.lock"
    assert "the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)" in (
        failure.message
    )
    # The base (no lock) was fetched; the head stopped before it downloaded anything, as Helm does.
    assert chart_repo.paths.count("/redis-17.3.0.tgz") == 1


def test_a_range_takes_the_newest_release_unless_the_lock_pins_one(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    from helm_python import registry

    chart_repo.add(redis("17.3.0"))
    ranged = app_chart(chart_repo.url, version="~17.3.0")
    work = tmp_path / "work" / "app"
    work.mkdir(parents=True)
    (work / "Chart.yaml").write_text(ranged)
    registry.dependency_update(work)  # Helm's own lock, made while 17.3.0 was the newest
    chart_repo.add(redis("17.3.5", BEST_EFFORT))
    chart_repo.clear_requests()

    g = repo_with(tmp_path, ranged)
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    review(g)
    assert "/redis-17.3.5.tgz" in chart_repo.paths and "/redis-17.3.0.tgz" not in chart_repo.paths

    chart_repo.clear_requests()
    g = GitBuilder(tmp_path / "locked")
    g.write("charts/app/Chart.yaml", ranged).write("charts/app/values.yaml", "{}\n")
    g.write("charts/app/Chart.lock", (work / "Chart.lock").read_text()).commit("locked")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    review(g)
    assert "/redis-17.3.0.tgz" in chart_repo.paths and "/redis-17.3.5.tgz" not in chart_repo.paths


def test_a_registry_that_answers_401_is_said(tmp_path: Path, auth_registry: OciRegistry) -> None:
    auth_registry.push(package_chart(redis("17.3.0"), tmp_path / "dist", tmp_path / "src"))
    g = repo_with(tmp_path, app_chart(auth_registry.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g)
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title.startswith(
        f"charts/app: not reviewed: dependency redis 17.3.0 from {auth_registry.url} could not "
        "be fetched: "
    )
    assert unreviewed.title.endswith(
        "the repository wants credentials: name it in dependencies.repositories and set "
        "HELM_REPO_<NAME>_USERNAME and _PASSWORD for the bot"
    )
    assert "basic credential not found" in unreviewed.message  # Helm's own words are kept


def test_a_registry_that_hangs_costs_the_time_limit_only(
    tmp_path: Path, hanging_registry: HangingServer
) -> None:
    g = repo_with(tmp_path, app_chart(hanging_registry.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    fetcher = HelmFetcher(limits=FetchLimits(wall_seconds=2.0))
    started = time.monotonic()
    report = review(g, fetcher)
    assert time.monotonic() - started < 30  # bounded: the fetch process is killed at 2 s
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title.endswith("could not be fetched: no answer within 2 s")


def test_a_repository_that_hangs_is_bounded_too(tmp_path: Path, chart_repo: ChartRepo) -> None:
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    chart_repo.mode = Hang()
    report = review(g, HelmFetcher(limits=FetchLimits(wall_seconds=1.5)))
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title.endswith("no answer within 1.5 s")


def vendored_repo(tmp_path: Path, url: str, vendored: str, lock: str | None) -> GitBuilder:
    """charts/app with redis-VENDORED.tgz committed (its template named `vendored.yaml`), and a
    Chart.lock for version LOCK when given."""
    spec = ChartSpec("redis", vendored, templates={"vendored.yaml": DEPLOYMENT}, values=GUARANTEED)
    archive = package_chart(spec, tmp_path / "vendored", tmp_path / "vsrc")
    g = repo_with(tmp_path, app_chart(url, version=lock or vendored))
    (g.path / "charts/app/charts").mkdir()
    (g.path / f"charts/app/charts/{archive.name}").write_bytes(archive.read_bytes())
    if lock is not None:
        work = tmp_path / "lockwork" / "app"
        work.mkdir(parents=True)
        (work / "Chart.yaml").write_text(app_chart(url, version=lock))
        from helm_python import registry

        registry.dependency_update(work)
        g.write("charts/app/Chart.lock", (work / "Chart.lock").read_text())
    g.commit("vendor")
    return g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")


@pytest.mark.parametrize(
    ("vendored", "lock", "template"),
    [
        ("17.2.0", None, "vendored.yaml"),  # no lock: used as it is, as helm template does
        ("17.3.0", "17.3.0", "vendored.yaml"),  # the lock agrees: used as it is
        ("17.2.0", "17.3.0", "deployment.yaml"),  # the lock names another: replaced, as helm
    ],  # dependency build replaces it
)
def test_a_vendored_archive_is_used_when_the_lock_agrees(
    tmp_path: Path, chart_repo: ChartRepo, vendored: str, lock: str | None, template: str
) -> None:
    chart_repo.add(redis("17.3.0"))
    g = vendored_repo(tmp_path, chart_repo.url, vendored, lock)
    chart_repo.clear_requests()
    (kind,) = rendered_kinds(g, HelmFetcher())
    assert kind.endswith(f"/templates/{template}")
    assert ("/redis-17.3.0.tgz" in chart_repo.paths) is (template == "deployment.yaml")


def test_an_archive_that_does_not_match_the_index_is_refused(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    """The index's digest pins the bytes: a tampered archive is not rendered, nor kept."""
    (archive,) = chart_repo.add(redis("17.3.0"))
    archive.write_bytes(archive.read_bytes() + b"\0" * 512)  # served in place of what was indexed
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    fetcher = HelmFetcher()
    report = review(g, fetcher)
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert "the archive's sha256 is sha256:" in unreviewed.title
    assert ", the index says " in unreviewed.title
    assert fetcher.store.versions(DependencyRequest(chart_repo.url, "redis", "17.3.0")) == []


def test_an_archive_past_the_size_limit_is_refused(tmp_path: Path, chart_repo: ChartRepo) -> None:
    big = ChartSpec("redis", "17.3.0", files={"blob.txt": os.urandom(400_000).hex()})
    chart_repo.add(big)
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g, HelmFetcher(limits=FetchLimits(max_bytes=100_000)))
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title.endswith(
        "could not be fetched: the download exceeded its size limit (100000 bytes a file)"
    )


def test_credentials_come_from_the_bots_environment(
    tmp_path: Path, auth_registry: OciRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.oci_registry import PASSWORD, USERNAME

    auth_registry.push(package_chart(redis("17.3.0"), tmp_path / "dist", tmp_path / "src"))
    g = GitBuilder(tmp_path / "repo")
    config = f"dependencies:\n  repositories:\n    - url: {auth_registry.url}\n      name: team-a\n"
    g.write(".github/chart-review.yml", config)
    g.write("charts/app/Chart.yaml", app_chart(auth_registry.url))
    g.write("charts/app/values.yaml", "{}\n").commit("app")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    monkeypatch.setenv("HELM_REPO_TEAM_A_USERNAME", USERNAME)
    monkeypatch.setenv("HELM_REPO_TEAM_A_PASSWORD", PASSWORD)
    report = review(g, HelmFetcher())
    assert [f.rule for f in report.findings if f.check == "render"] == []


def test_a_dependency_bump_that_changes_a_pods_class_says_so(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    chart_repo.add(redis("17.3.0"), redis("18.1.2", BEST_EFFORT))
    g = repo_with(tmp_path, app_chart(chart_repo.url))
    g.branch("pr").write("charts/app/Chart.yaml", app_chart(chart_repo.url, "18.1.2", "1.1.0"))
    report = review(g.commit("bump redis"))
    (qos,) = [f for f in report.findings if f.check == "qos"]
    assert (qos.rule, qos.severity, qos.subject) == (
        "downgrade",
        Severity.FAILURE,
        "Deployment/default/release-redis",
    )
    assert qos.path == "charts/app/charts/redis/templates/deployment.yaml"
    assert qos.message.endswith("(subchart redis, dependency redis 17.3.0 → 18.1.2)")
    assert qos.data["subchart"] == {"name": "redis", "base": "17.3.0", "head": "18.1.2"}


def test_a_registry_config_file_gives_the_registry_credentials(
    tmp_path: Path, auth_registry: OciRegistry
) -> None:
    """`registry_config`: a Docker-style credentials file on the bot's machine, as helm's own
    `--registry-config` reads it."""
    import base64
    import json

    from tests.support.oci_registry import PASSWORD, USERNAME

    auth_registry.push(package_chart(redis("17.3.0"), tmp_path / "dist", tmp_path / "src"))
    token = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    credentials = tmp_path / "registry.json"
    credentials.write_text(json.dumps({"auths": {auth_registry.host: {"auth": token}}}))
    g = GitBuilder(tmp_path / "repo")
    config = (
        f"dependencies:\n  repositories:\n    - url: {auth_registry.url}\n"
        f"      registry_config: {credentials}\n"
    )
    g.write(".github/chart-review.yml", config)
    g.write("charts/app/Chart.yaml", app_chart(auth_registry.url))
    g.write("charts/app/values.yaml", "{}\n").commit("app")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g, HelmFetcher())
    assert [f.title for f in report.findings if f.check == "render"] == []


def v1_chart(repository: str, version: str = "17.3.0") -> tuple[str, str]:
    """An apiVersion v1 chart (DataDog's `datadog` is one): its dependencies in requirements.yaml."""
    chart = "apiVersion: v1\nname: app\nversion: 1.0.0\n"
    requirements = (
        f"dependencies:\n  - name: redis\n    version: {version}\n    repository: {repository}\n"
    )
    return chart, requirements


def test_an_apiversion_v1_chart_s_requirements_are_fetched_and_rendered(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    """Helm 3 still reads requirements.yaml and requirements.lock: the lock Helm writes pins the
    version fetched, and the dependency renders as it would after `helm dependency build`."""
    from helm_python import registry

    chart_repo.add(redis("17.3.0"))
    chart, requirements = v1_chart(chart_repo.url, "~17.3.0")
    work = tmp_path / "work" / "app"
    work.mkdir(parents=True)
    (work / "Chart.yaml").write_text(chart)
    (work / "requirements.yaml").write_text(requirements)
    registry.dependency_update(work)  # Helm's own requirements.lock, pinning 17.3.0
    assert not (work / "Chart.lock").exists()
    chart_repo.add(redis("17.3.5", BEST_EFFORT))
    chart_repo.clear_requests()

    g = repo_with(tmp_path, chart)
    g.write("charts/app/requirements.yaml", requirements)
    g.write("charts/app/requirements.lock", (work / "requirements.lock").read_text()).commit("v1")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    assert rendered_kinds(g, HelmFetcher()) == [
        "Deployment/release-redis@charts/app/charts/redis/templates/deployment.yaml"
    ]
    assert "/redis-17.3.0.tgz" in chart_repo.paths and "/redis-17.3.5.tgz" not in chart_repo.paths


def test_a_v1_lock_out_of_sync_is_said_in_helms_v1_words(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    chart_repo.add(redis("17.3.0"))
    chart, requirements = v1_chart(chart_repo.url)
    g = repo_with(tmp_path, chart)
    g.write("charts/app/requirements.yaml", requirements).commit("v1")
    lock = (
        f"dependencies:\n- name: redis\n  repository: {chart_repo.url}\n  version: 17.3.0\n"
        "digest: sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
    )
    g.branch("pr").write("charts/app/requirements.lock", lock).commit("a hand-made lock")
    report = review(g)
    (failure,) = [f for f in report.findings if f.check == "render" and f.severity == "failure"]
    assert failure.path == "charts/app/requirements.lock"
    assert (
        "the lock file (requirements.lock) is out of sync with the dependencies file "
        "(requirements.yaml)" in failure.message
    )


def test_a_v1_lock_helm_2_wrote_is_in_sync(tmp_path: Path, chart_repo: ChartRepo) -> None:
    """Helm 2 hashed `{"dependencies": [...]}` alone; Helm 3 accepts that digest for a v1 chart."""
    chart_repo.add(redis("17.3.0"))
    chart, requirements = v1_chart(chart_repo.url)
    hashed = (
        '{"dependencies":[{"name":"redis","version":"17.3.0","repository":"'
        + chart_repo.url
        + '"}]}'
    )
    lock = (
        f"dependencies:\n- name: redis\n  repository: {chart_repo.url}\n  version: 17.3.0\n"
        f"digest: sha256:{hashlib.sha256(hashed.encode()).hexdigest()}\n"
    )
    g = repo_with(tmp_path, chart)
    g.write("charts/app/requirements.yaml", requirements)
    g.write("charts/app/requirements.lock", lock).commit("a lock from Helm 2")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    assert len(rendered_kinds(g, HelmFetcher())) == 1
    # The same digest on an apiVersion v2 chart is no Helm 3 digest: out of sync.
    g.checkout("pr").write("charts/app/Chart.yaml", chart.replace("v1", "v2")).commit("v2")
    report = review(g)
    assert any("is out of sync" in f.message for f in report.findings if f.check == "render")


def test_offline_a_v1_chart_names_requirements_yaml(tmp_path: Path, chart_repo: ChartRepo) -> None:
    chart, requirements = v1_chart(chart_repo.url)
    g = repo_with(tmp_path, chart)
    g.write("charts/app/requirements.yaml", requirements).commit("v1")
    g.branch("pr").write("charts/app/values.yaml", "x: 1\n").commit("touch")
    report = review(g, offline=True)
    (unreviewed,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert unreviewed.title == (
        f"charts/app: not reviewed: dependency redis 17.3.0 from {chart_repo.url} could not be "
        "fetched: fetching is off (--offline was given)"
    )
    head = [f for f in report.findings if f.check == "render" and f.rule != "not-reviewed"]
    assert {(f.path, f.line) for f in head} == {("charts/app/requirements.yaml", 2)}
