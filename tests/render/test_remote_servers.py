"""The chart repository and OCI registry test servers, proven with helm-python-sdk itself.

These also pin what the SDK does at each failure (exception class and message), since the
dependency fetcher is designed on it: an SDK upgrade that changes one fails here first."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from helm_python import HelmRegistryError, HelmRepoError, RegistryClient, registry

from tests.support.chart_repo import (
    BasicAuth,
    ChartRepo,
    ChartSpec,
    Hang,
    Serve,
    Status,
    package_chart,
)
from tests.support.chart_repo import chart_repo as chart_repo  # noqa: F401 - fixture
from tests.support.oci_registry import PASSWORD, USERNAME, HangingServer, OciRegistry
from tests.support.oci_registry import auth_registry as auth_registry  # noqa: F401 - fixture
from tests.support.oci_registry import hanging_registry as hanging_registry  # noqa: F401
from tests.support.oci_registry import oci_registry as oci_registry  # noqa: F401 - fixture

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-redis
spec:
  containers:
    - name: redis
      image: example/redis:{{ .Values.tag }}
"""
REDIS = ChartSpec("redis", "17.3.0", templates={"pod.yaml": POD}, values={"tag": "7"})
# A pull that has not returned within this long is hanging: a local pull takes ~20 ms.
HANG_SECONDS = 2.0
# Stopping a server with a client still waiting on it must be this quick.
STOP_SECONDS = 1.0
# Pulls in a child process, so a hang can be cut short by killing it.
CHILD_PULL = (
    "import sys, helm_python\n"
    "ref, repo_url, dest = sys.argv[1:]\n"
    "helm_python.registry.pull(ref, repo_url=repo_url or None, version='17.3.0',"
    " destination=dest, plain_http=True)\n"
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pull_http(
    repo: ChartRepo,
    dest: Path,
    version: str = "17.3.0",
    username: str | None = None,
    password: str | None = None,
) -> Path:
    dest.mkdir(parents=True, exist_ok=True)  # pull refuses a destination that does not exist
    registry.pull(
        "redis",
        repo_url=repo.url,
        version=version,
        destination=dest,
        username=username,
        password=password,
    )
    return dest / f"redis-{version}.tgz"


def index_digest(repo: ChartRepo, name: str, version: str) -> str:
    index = yaml.safe_load((repo.public / "index.yaml").read_text())
    [entry] = [e for e in index["entries"][name] if e["version"] == version]
    return str(entry["digest"])


def assert_pull_hangs(ref: str, repo_url: str, dest: Path) -> list[str]:
    """Kills the pulling child after HANG_SECONDS; returns what it left in its TMPDIR (a killed
    pull cannot remove its work directory, so the child gets a TMPDIR of the test's own)."""
    dest.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / "child-tmp"
    tmp.mkdir()
    with pytest.raises(subprocess.TimeoutExpired):  # run() kills the child on timeout
        subprocess.run(
            [sys.executable, "-c", CHILD_PULL, ref, repo_url, str(dest)],
            env={**os.environ, "TMPDIR": str(tmp)},
            timeout=HANG_SECONDS,
        )
    return sorted(p.name.rstrip("0123456789") for p in tmp.iterdir())


# The chart repository


def test_pull_by_name_and_version_gets_the_indexed_bytes(chart_repo: ChartRepo, tmp_path: Path):
    [archive] = chart_repo.add(REDIS)
    pulled = pull_http(chart_repo, tmp_path / "dl")
    assert sha256(pulled) == sha256(archive) == index_digest(chart_repo, "redis", "17.3.0")
    assert chart_repo.paths == ["/index.yaml", "/redis-17.3.0.tgz"]


def test_a_repository_under_a_path_serves_below_it(tmp_path: Path):
    with ChartRepo(tmp_path / "pages", prefix="/helm-charts") as repo:
        repo.add(REDIS)
        assert repo.url.endswith("/helm-charts")
        assert pull_http(repo, tmp_path / "dl").is_file()
        assert repo.paths == ["/helm-charts/index.yaml", "/helm-charts/redis-17.3.0.tgz"]
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(repo.url.removesuffix("/helm-charts") + "/index.yaml", timeout=5)


def test_every_pull_downloads_the_index_again(chart_repo: ChartRepo, tmp_path: Path):
    chart_repo.add(REDIS)
    pull_http(chart_repo, tmp_path / "one")
    pull_http(chart_repo, tmp_path / "two")
    assert chart_repo.paths == ["/index.yaml", "/redis-17.3.0.tgz"] * 2


def test_a_chart_added_later_is_indexed_beside_the_first(chart_repo: ChartRepo, tmp_path: Path):
    chart_repo.add(REDIS)
    chart_repo.add(ChartSpec("redis", "18.1.2", values="tag: '8'\n"))
    pulled = pull_http(chart_repo, tmp_path / "dl", version="18.1.2")
    assert sha256(pulled) == index_digest(chart_repo, "redis", "18.1.2")
    versions = {entry["version"] for entry in chart_repo.index()["entries"]["redis"]}
    assert versions == {"17.3.0", "18.1.2"}


def test_a_version_not_in_the_index_is_a_repo_error(chart_repo: ChartRepo, tmp_path: Path):
    chart_repo.add(REDIS)
    with pytest.raises(HelmRepoError) as raised:
        pull_http(chart_repo, tmp_path / "dl", version="9.9.9")
    assert str(raised.value) == (
        f'chart "redis" version "9.9.9" not found in {chart_repo.url} repository'
    )
    assert chart_repo.paths == ["/index.yaml"]


@pytest.mark.parametrize(
    "code, reason", [(401, "Unauthorized"), (404, "Not Found"), (500, "Internal Server Error")]
)
def test_a_status_mode_fails_the_index_fetch(
    chart_repo: ChartRepo, tmp_path: Path, code: int, reason: str
):
    chart_repo.add(REDIS)
    chart_repo.mode = Status(code)
    with pytest.raises(HelmRepoError) as raised:
        pull_http(chart_repo, tmp_path / "dl")
    assert str(raised.value) == (
        f'looks like "{chart_repo.url}" is not a valid chart repository or cannot be reached: '
        f"failed to fetch {chart_repo.url}/index.yaml : {code} {reason}"
    )
    assert chart_repo.paths == ["/index.yaml"]
    chart_repo.mode = Serve()
    assert pull_http(chart_repo, tmp_path / "dl").is_file()


def test_a_401_asks_for_basic_auth(chart_repo: ChartRepo):
    chart_repo.mode = Status(401)
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(f"{chart_repo.url}/index.yaml", timeout=5)
    assert raised.value.code == 401
    assert raised.value.headers["WWW-Authenticate"].startswith("Basic ")


def test_basic_auth_mode_serves_only_the_right_credentials(chart_repo: ChartRepo, tmp_path: Path):
    chart_repo.add(REDIS)
    chart_repo.mode = BasicAuth("reader", "s3cret")
    with pytest.raises(HelmRepoError, match=r"index.yaml : 401 Unauthorized$"):
        pull_http(chart_repo, tmp_path / "anon")
    with pytest.raises(HelmRepoError, match=r"401 Unauthorized$"):
        pull_http(chart_repo, tmp_path / "wrong", username="reader", password="nope")
    chart_repo.clear_requests()
    pulled = pull_http(chart_repo, tmp_path / "ok", username="reader", password="s3cret")
    assert sha256(pulled) == index_digest(chart_repo, "redis", "17.3.0")
    sent = "Basic " + base64.b64encode(b"reader:s3cret").decode()
    assert [(r.path, r.authorization) for r in chart_repo.requests] == [
        ("/index.yaml", sent),
        ("/redis-17.3.0.tgz", sent),
    ]


def test_bytes_that_differ_from_the_index_digest_are_pulled_anyway(
    chart_repo: ChartRepo, tmp_path: Path
):
    """pull does not check the index's digest: whoever needs the pin must compare it."""
    chart_repo.add(REDIS)
    [other] = chart_repo.add(ChartSpec("other", "1.0.0"))
    digest = index_digest(chart_repo, "redis", "17.3.0")
    (chart_repo.public / "redis-17.3.0.tgz").write_bytes(other.read_bytes())
    pulled = pull_http(chart_repo, tmp_path / "dl")
    assert sha256(pulled) == sha256(other) != digest


def test_connection_refused_is_a_repo_error(tmp_path: Path):
    with ChartRepo(tmp_path / "gone") as repo:
        url = repo.url
    with pytest.raises(HelmRepoError) as raised:
        registry.pull("redis", repo_url=url, version="17.3.0", destination=tmp_path)
    assert str(raised.value) == (
        f'looks like "{url}" is not a valid chart repository or cannot be reached: '
        f'Get "{url}/index.yaml": dial tcp {url.removeprefix("http://")}: connect: '
        "connection refused"
    )


def test_hang_mode_holds_the_pull_and_stops_quickly(tmp_path: Path):
    with ChartRepo(tmp_path / "repo") as repo:
        repo.add(REDIS)
        repo.mode = Hang()
        assert assert_pull_hangs("redis", repo.url, tmp_path / "dl") == ["helm-c-pull-"]
        assert repo.paths == ["/index.yaml"]  # the request arrived; no answer came
        started = time.monotonic()
    assert time.monotonic() - started < STOP_SECONDS


def test_pull_leaves_only_an_empty_repository_cache(chart_repo: ChartRepo, tmp_path: Path):
    """Helm's dirs come from the environment the library saw at load, hence a child process."""
    chart_repo.add(REDIS)
    home, cache = tmp_path / "home", tmp_path / "helm-cache"
    home.mkdir()
    env = {"HOME": str(home), "HELM_CACHE_HOME": str(cache), "PATH": "/usr/bin:/bin"}
    dest = tmp_path / "dl"
    dest.mkdir()
    subprocess.run(
        [sys.executable, "-c", CHILD_PULL, "redis", chart_repo.url, str(dest)],
        env=env,
        check=True,
        timeout=30,
    )
    assert [p.name for p in dest.iterdir()] == ["redis-17.3.0.tgz"]
    assert [str(p.relative_to(tmp_path)) for p in sorted(cache.rglob("*"))] == [
        "helm-cache/repository"
    ]
    assert list(home.rglob("*")) == []


# The OCI registry


def package(spec: ChartSpec, tmp_path: Path) -> Path:
    return package_chart(spec, tmp_path / "packaged", tmp_path / "sources")


def test_push_then_tags_resolve_and_pull(oci_registry: OciRegistry, tmp_path: Path):
    archive = package(REDIS, tmp_path)
    ref = oci_registry.push(archive)
    assert ref == f"oci://{oci_registry.host}/charts/redis"
    client = RegistryClient(plain_http=True)
    assert client.tags(ref) == ["17.3.0"]
    descriptor = client.resolve(f"{ref}:17.3.0")
    assert descriptor["digest"].startswith("sha256:")
    assert descriptor["media_type"] == "application/vnd.oci.image.manifest.v1+json"
    before = oci_registry.blob_gets()
    dest = tmp_path / "dl"
    dest.mkdir()
    registry.pull(ref, version="17.3.0", destination=dest, plain_http=True)
    assert sha256(dest / "redis-17.3.0.tgz") == sha256(archive)
    assert oci_registry.blob_gets() - before == 2  # the chart's config and its one layer


def test_a_corrupt_blob_is_refused(oci_registry: OciRegistry, tmp_path: Path):
    archive = package(REDIS, tmp_path)
    ref = oci_registry.push(archive)
    blobs = oci_registry.workdir / "storage" / "docker" / "registry" / "v2" / "blobs"
    [layer] = [p for p in blobs.rglob("data") if p.read_bytes() == archive.read_bytes()]
    layer.write_bytes(b"x" * len(archive.read_bytes()))
    with pytest.raises(HelmRepoError) as raised:
        registry.pull(ref, version="17.3.0", destination=tmp_path, plain_http=True)
    assert str(raised.value) == 'failed to perform "Push" on destination: mismatched digest'


def test_a_pinned_digest_that_differs_is_refused(oci_registry: OciRegistry, tmp_path: Path):
    ref = oci_registry.push(package(REDIS, tmp_path))
    actual = oci_registry.client().resolve(f"{ref}:17.3.0")["digest"]
    wrong = "sha256:" + "0" * 64
    with pytest.raises(HelmRepoError) as raised:
        registry.pull(f"{ref}:17.3.0@{wrong}", destination=tmp_path, plain_http=True)
    assert str(raised.value) == f"chart reference digest mismatch: {actual} is not {wrong}"


def test_a_missing_tag_is_not_found(oci_registry: OciRegistry, tmp_path: Path):
    ref = oci_registry.push(package(REDIS, tmp_path))
    with pytest.raises(HelmRepoError) as raised:
        registry.pull(ref, version="9.9.9", destination=tmp_path, plain_http=True)
    assert str(raised.value) == (
        f'failed to perform "FetchReference" on source: {ref.removeprefix("oci://")}:9.9.9: '
        "not found"
    )


def test_auth_registry_refuses_anonymous_and_serves_a_logged_in_client(
    auth_registry: OciRegistry, tmp_path: Path
):
    ref = auth_registry.push(package(REDIS, tmp_path))
    host = auth_registry.host
    anonymous = RegistryClient(plain_http=True, credentials_file=tmp_path / "anon.json")
    with pytest.raises(HelmRepoError) as raised:
        anonymous.pull(ref, version="17.3.0", destination=tmp_path, plain_http=True)
    assert str(raised.value) == (
        f'failed to perform "FetchReference" on source: '
        f'GET "http://{host}/v2/charts/redis/manifests/17.3.0": basic credential not found'
    )
    with pytest.raises(HelmRegistryError, match="basic credential not found$"):
        anonymous.tags(ref)
    with pytest.raises(HelmRegistryError) as refused:
        anonymous.login(host, USERNAME, "wrong", plain_http=True)
    assert str(refused.value) == (
        f'authenticating to "{host}": GET "http://{host}/v2/": '
        "response status code 401: unauthorized: authentication required"
    )
    client = RegistryClient(plain_http=True, credentials_file=tmp_path / "creds.json")
    client.login(host, USERNAME, PASSWORD, plain_http=True)
    dest = tmp_path / "dl"
    dest.mkdir()
    before = auth_registry.blob_gets()
    client.pull(ref, version="17.3.0", destination=dest, plain_http=True)
    assert (dest / "redis-17.3.0.tgz").is_file()
    assert auth_registry.blob_gets() - before == 2
    assert auth_registry.blob_gets(status=401) >= 1  # each request is challenged first


def test_username_and_password_do_not_reach_an_oci_pull(auth_registry: OciRegistry, tmp_path: Path):
    """For oci:// refs, pull's username/password are ignored: only a logged-in client works."""
    ref = auth_registry.push(package(REDIS, tmp_path))
    with pytest.raises(HelmRepoError, match="basic credential not found$"):
        registry.pull(
            ref,
            client=RegistryClient(plain_http=True, credentials_file=tmp_path / "anon.json"),
            version="17.3.0",
            destination=tmp_path,
            plain_http=True,
            username=USERNAME,
            password=PASSWORD,
        )


CHILD_LOGIN = (
    "import sys, helm_python\n"
    "host, ref, dest = sys.argv[1:]\n"
    "helm_python.RegistryClient(plain_http=True).login(host, 'chart-review', 'registry-secret',"
    " plain_http=True)\n"
    "helm_python.registry.pull(ref, version='17.3.0', destination=dest, plain_http=True)\n"
)


def test_a_default_client_keeps_its_login_in_helm_config_home(
    auth_registry: OciRegistry, tmp_path: Path
):
    """Where a login without `credentials_file` lands, and that a client-less pull then uses it:
    HELM_CONFIG_HOME counts, HELM_REGISTRY_CONFIG does not."""
    ref = auth_registry.push(package(REDIS, tmp_path))
    home, config, dest = tmp_path / "home", tmp_path / "helm-config", tmp_path / "dl"
    home.mkdir()
    dest.mkdir()
    env = {
        "HOME": str(home),
        "HELM_CONFIG_HOME": str(config),
        "HELM_REGISTRY_CONFIG": str(tmp_path / "ignored.json"),
    }
    subprocess.run(
        [sys.executable, "-c", CHILD_LOGIN, auth_registry.host, ref, str(dest)],
        env=env,
        check=True,
        timeout=30,
    )
    assert (dest / "redis-17.3.0.tgz").is_file()
    assert [str(p.relative_to(config)) for p in config.rglob("*.json")] == ["registry/config.json"]
    assert auth_registry.host in (config / "registry" / "config.json").read_text()
    assert not (tmp_path / "ignored.json").exists()
    assert list(home.rglob("*")) == []


def test_a_hanging_registry_holds_the_pull(hanging_registry: HangingServer, tmp_path: Path):
    leftovers = assert_pull_hangs(f"{hanging_registry.url}/redis", "", tmp_path / "dl")
    assert leftovers == ["helm-c-pull-"]
    assert hanging_registry.connections >= 1


def test_a_stopped_registry_refuses_connections(tmp_path: Path):
    with OciRegistry(tmp_path / "reg") as running:
        ref = running.push(package(REDIS, tmp_path))
    with pytest.raises(HelmRepoError, match="connect: connection refused$"):
        registry.pull(ref, version="17.3.0", destination=tmp_path, plain_http=True)
