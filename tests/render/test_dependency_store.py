"""The machine's dependency store and the fetch policy: one fetch per chart version however many
reviews want it at once, a damaged file never served, and a repository allowed only as listed."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from bot.render.deps.fetcher import HelmFetcher
from bot.render.deps.policy import Access, FetchPolicy, credentials, plain_http
from bot.render.deps.request import DependencyRequest
from bot.render.deps.store import DependencyStore
from tests.support.chart_repo import ChartRepo, ChartSpec

REQUEST = DependencyRequest("https://charts.example.test/", "redis", "17.3.0")


def test_a_stored_archive_is_found_by_repository_name_and_version(tmp_path: Path) -> None:
    store = DependencyStore(tmp_path)
    put = store.put(REQUEST, "17.3.0", b"archive")
    assert put.digest == "sha256:" + hashlib.sha256(b"archive").hexdigest()
    # The same repository written without its trailing slash is the same repository.
    same = DependencyRequest("https://charts.example.test", "redis", "17.3.0")
    assert DependencyStore(tmp_path).lookup(same, "17.3.0") == put
    assert store.lookup(REQUEST, "17.3.1") is None
    assert store.versions(REQUEST) == ["17.3.0"]


def test_a_damaged_archive_is_not_served(tmp_path: Path) -> None:
    store = DependencyStore(tmp_path)
    put = store.put(REQUEST, "17.3.0", b"archive")
    blob = tmp_path / "blobs" / "sha256" / f"{put.digest.removeprefix('sha256:')}.tgz"
    blob.write_bytes(b"archivf")
    assert store.lookup(REQUEST, "17.3.0") is None


def test_reviews_that_want_the_same_chart_at_once_fetch_it_once(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    chart_repo.add(ChartSpec("redis", "17.3.0"))
    request = DependencyRequest(chart_repo.url, "redis", "17.3.0")
    policy = FetchPolicy((Access(chart_repo.url),))
    fetchers = [HelmFetcher(DependencyStore(tmp_path)) for _ in range(4)]  # as 4 workers would
    got: list[str] = []
    threads = [
        threading.Thread(target=lambda f=f: got.append(f.fetch(request, policy).digest))
        for f in fetchers
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(got)) == 1 and len(got) == 4
    assert sum(f.requests for f in fetchers) == 2  # the index, then the archive: once in all
    assert chart_repo.paths == ["/index.yaml", "/redis-17.3.0.tgz"]


def test_the_allow_list_matches_a_chart_repository_exactly_and_a_registry_by_path() -> None:
    policy = FetchPolicy((Access("https://charts.example.test/"), Access("oci://Reg.test/charts")))
    assert policy.access("https://charts.example.test") is not None
    assert policy.access("https://charts.example.test/other") is None
    assert policy.access("oci://reg.test/charts/team") is not None
    assert policy.access("oci://reg.test/chartsX") is None
    assert policy.access("oci://reg.test") is None


def test_credentials_come_from_the_named_variables_first() -> None:
    access = Access("https://x.test", name="team-a", username="file", password="pw")
    env = {"HELM_REPO_TEAM_A_USERNAME": "bot", "HELM_REPO_TEAM_A_PASSWORD": "secret"}
    assert credentials(access, env) == ("bot", "secret")
    assert credentials(access, {}) == ("file", "pw")
    assert credentials(Access("https://x.test"), env) is None


def test_loopback_registries_are_spoken_to_without_tls() -> None:
    assert plain_http("oci://127.0.0.1:5000/charts") and plain_http("oci://localhost/c")
    assert plain_http("http://charts.example.test")
    assert not plain_http("oci://registry.example.test/charts")
    assert not plain_http("https://charts.example.test")
    assert plain_http("oci://127.8.9.10/c") and plain_http("oci://[::1]:5000/c")
    # Names that only look like loopback are names: DNS may send them anywhere.
    assert not plain_http("oci://127.example.test/c") and not plain_http("oci://127.0.0.1.nip.io")
    assert not plain_http("oci://localhost.example.test/c")
