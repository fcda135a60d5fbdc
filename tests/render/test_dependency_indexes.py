"""A chart repository's index: downloaded once per review and shared by later reviews for
INDEX_SECONDS (a failure as long), keyed by the credentials it was read with, and read by the
review itself: where each archive is, and what an index may not make it do. Counted at a real
chart repository on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.render.deps.fetcher import FetchLimits, HelmFetcher
from bot.render.deps.index import MAX_INDEX_ENTRIES, reduce_index, resolve
from bot.render.deps.indexes import INDEX_SECONDS, Pinned
from bot.render.deps.policy import Access, FetchPolicy
from bot.render.deps.request import DependencyRequest, FetchError
from bot.render.deps.store import DependencyStore
from tests.support.chart_repo import BasicAuth, ChartRepo, ChartSpec, Serve, Status
from tests.support.clock import ManualClock


def setup(tmp_path: Path, repo: ChartRepo, count: int = 3) -> tuple[HelmFetcher, ManualClock]:
    repo.add(*(ChartSpec(f"lib{i}", "1.0.0") for i in range(count)))
    clock = ManualClock()
    return HelmFetcher(DependencyStore(tmp_path / "store"), clock=clock), clock


def want(repo: ChartRepo, i: int) -> DependencyRequest:
    return DependencyRequest(repo.url, f"lib{i}", "1.0.0")


def indexes(repo: ChartRepo) -> int:
    return repo.paths.count("/index.yaml")


def test_later_reviews_share_an_index_for_a_short_while(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    fetcher, clock = setup(tmp_path, chart_repo)
    policy = FetchPolicy((Access(chart_repo.url),))
    fetcher.fetch(want(chart_repo, 0), policy, {})  # one review
    fetcher.fetch(want(chart_repo, 1), policy, {})  # the next, just after
    assert indexes(chart_repo) == 1
    clock.advance(INDEX_SECONDS)
    fetcher.fetch(want(chart_repo, 2), policy, {})
    assert indexes(chart_repo) == 2
    assert fetcher.indexes.downloads == 2


def test_a_review_reads_the_index_it_began_with(tmp_path: Path, chart_repo: ChartRepo) -> None:
    fetcher, clock = setup(tmp_path, chart_repo)
    policy = FetchPolicy((Access(chart_repo.url),))
    review: Pinned = {}
    fetcher.fetch(want(chart_repo, 0), policy, review)
    clock.advance(10 * INDEX_SECONDS)  # a long review: its index is still its own
    fetcher.fetch(want(chart_repo, 1), policy, review)
    assert indexes(chart_repo) == 1


def test_a_repository_that_failed_is_not_asked_again_for_a_while(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    fetcher, clock = setup(tmp_path, chart_repo)
    policy = FetchPolicy((Access(chart_repo.url),))
    chart_repo.mode = Status(503)
    for i in range(3):
        with pytest.raises(FetchError, match="index.yaml: 503 Service Unavailable$"):
            fetcher.fetch(want(chart_repo, i), policy, {})
    assert chart_repo.paths == ["/index.yaml"]
    chart_repo.mode = Serve()
    clock.advance(INDEX_SECONDS)
    fetcher.fetch(want(chart_repo, 0), policy, {})
    assert indexes(chart_repo) == 2


def test_an_index_read_with_credentials_is_not_shared_without_them(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    fetcher, _ = setup(tmp_path, chart_repo)
    chart_repo.mode = BasicAuth("bot", "s3cret")
    private = FetchPolicy((Access(chart_repo.url, username="bot", password="s3cret"),))
    fetcher.fetch(want(chart_repo, 0), private, {})
    with pytest.raises(FetchError, match="401 Unauthorized; the repository wants credentials"):
        fetcher.fetch(want(chart_repo, 1), FetchPolicy((Access(chart_repo.url),)), {})
    assert [(r.path, r.authorization is None) for r in chart_repo.requests] == [
        ("/index.yaml", False),
        ("/lib0-1.0.0.tgz", False),
        ("/index.yaml", True),
    ]


def rewrite_index(repo: ChartRepo, urls: dict[str, str]) -> None:
    index = yaml.safe_load((repo.public / "index.yaml").read_text())
    for name, url in urls.items():
        index["entries"][name][0]["urls"] = [url]
    (repo.public / "index.yaml").write_text(yaml.safe_dump(index))


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/lib0-1.0.0.tgz", "gopher://x/y"]
)
def test_an_archive_url_that_is_not_http_is_refused(
    tmp_path: Path, chart_repo: ChartRepo, url: str
) -> None:
    fetcher, _ = setup(tmp_path, chart_repo, 1)
    rewrite_index(chart_repo, {"lib0": url})
    with pytest.raises(FetchError) as raised:
        fetcher.fetch(want(chart_repo, 0), FetchPolicy((Access(chart_repo.url),)))
    assert raised.value.reason == (
        f"the repository's index.yaml gives lib0 1.0.0 at {url}: only http:// and https:// "
        "archives are fetched"
    )
    assert chart_repo.paths == ["/index.yaml"]
    assert fetcher.requests == 1  # the index's process; none for the archive


@pytest.mark.parametrize(
    ("location", "said"),
    [
        ("ftp://127.0.0.1/x.tgz", "302 redirected to ftp://127.0.0.1/x.tgz, not an http(s) URL"),
        (
            "file:///etc/passwd",
            "302 Found - Redirection to url 'file:///etc/passwd' is not allowed",
        ),
    ],
)
def test_a_redirect_to_another_scheme_is_refused(
    tmp_path: Path, chart_repo: ChartRepo, location: str, said: str
) -> None:
    fetcher, _ = setup(tmp_path, chart_repo, 1)
    chart_repo.redirects["/lib0-1.0.0.tgz"] = location
    with pytest.raises(FetchError) as raised:
        fetcher.fetch(want(chart_repo, 0), FetchPolicy((Access(chart_repo.url),)))
    assert raised.value.reason == f"failed to fetch {chart_repo.url}/lib0-1.0.0.tgz: {said}"


def test_an_index_past_the_size_limit_is_refused(tmp_path: Path, chart_repo: ChartRepo) -> None:
    fetcher = HelmFetcher(DependencyStore(tmp_path / "store"), FetchLimits(max_bytes=2048))
    chart_repo.add(*(ChartSpec(f"lib{i}", "1.0.0") for i in range(12)))  # an index of ~3 KB
    assert (chart_repo.public / "index.yaml").stat().st_size > 2048
    with pytest.raises(FetchError) as raised:
        fetcher.fetch(want(chart_repo, 0), FetchPolicy((Access(chart_repo.url),)))
    assert raised.value.reason == "the download exceeded its size limit (2048 bytes a file)"


def test_an_index_whose_aliases_multiply_its_entries_is_refused(
    tmp_path: Path, chart_repo: ChartRepo
) -> None:
    """A thousand entries aliased under 300 names: 300,000 rows from 40 KB of text."""
    names = 300
    release = "{version: 1.0.0, urls: [x.tgz]}"
    text = "apiVersion: v1\nentries:\n  n0: &all [" + ", ".join([release] * 1000) + "]\n"
    text += "".join(f"  n{i}: *all\n" for i in range(1, names))
    (chart_repo.public / "index.yaml").write_text(text)
    fetcher = HelmFetcher(DependencyStore(tmp_path / "store"))
    with pytest.raises(FetchError) as raised:
        fetcher.fetch(
            DependencyRequest(chart_repo.url, "n1", "1.0.0"), FetchPolicy((Access(chart_repo.url),))
        )
    assert raised.value.reason == (
        f"{chart_repo.url}/index.yaml lists more than {MAX_INDEX_ENTRIES} chart versions"
    )
    assert names * 1000 > MAX_INDEX_ENTRIES


def test_only_scalar_versions_and_urls_are_read() -> None:
    text = (
        b"apiVersion: v1\nentries:\n"
        b"  a:\n    - {version: [1, 2], urls: [x.tgz]}\n    - {version: 1.0.0, urls: [{u: 1}]}\n"
        b"    - not-a-mapping\n    - {version: 2.0.0, urls: [a-2.0.0.tgz], digest: abc}\n"
    )
    assert reduce_index(text, "u") == {
        "a": [["1.0.0", None, None], ["2.0.0", "a-2.0.0.tgz", "abc"]]
    }
    with pytest.raises(ValueError, match="not a chart repository index"):
        reduce_index(b"entries: {}\n", "u")


@pytest.mark.parametrize(
    ("repository", "url", "resolved"),
    [
        ("https://h.test/charts", "redis-1.tgz", "https://h.test/charts/redis-1.tgz"),
        ("https://h.test/charts/", "redis-1.tgz", "https://h.test/charts/redis-1.tgz"),
        ("https://h.test", "/dl/redis-1.tgz", "https://h.test/dl/redis-1.tgz"),
        ("https://h.test/c?sig=1", "redis-1.tgz", "https://h.test/c/redis-1.tgz?sig=1"),
        ("https://h.test/c", "https://cdn.test/r.tgz", "https://cdn.test/r.tgz"),
    ],
)
def test_archive_urls_resolve_as_helm_resolves_them(
    repository: str, url: str, resolved: str
) -> None:
    assert resolve(repository, url) == resolved


@pytest.mark.parametrize(
    ("said", "wants"),
    [
        (
            "failed to fetch http://127.0.0.1:40123/x.tgz: 302 Found - Redirection not allowed",
            False,
        ),
        ("failed to fetch http://127.0.0.1:5000/lib-4010.tgz: 404 Not Found", False),
        ("failed to fetch https://charts.example.com/index.yaml: 401 Unauthorized", True),
        ("unexpected status code 401: denied", True),
        ("pull access denied: authentication required", True),
    ],
)
def test_only_a_401_or_the_words_for_it_ask_for_credentials(said: str, wants: bool) -> None:
    """A port's digits are no status: a test server on port 40123 once read as a 401 (a flake)."""
    from bot.render.deps.fetcher import AUTH_RE

    assert bool(AUTH_RE.search(said)) is wants
