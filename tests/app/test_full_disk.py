"""A full disk is survived: on a real 8 MB tmpfs, filled with a filler file, the render cache and the
mirrors fail cleanly (a review still completes, nothing half-written stays), and once the filler
is deleted the next review, sync and delivery work. Needs root to mount; skipped otherwise."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.git.mirror import MirrorDiskFull, Mirrors
from bot.git.repo import GitRepo
from bot.render.cache import CachedRender, CacheKey, RenderCache
from tests.support.app_harness import app_settings, pull_request_event, running_app, wait_for
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.charts import chart_files
from tests.support.check_runs import family_verdicts
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated

DISK_MB = 8
CHUNK = 1 << 20
COMMAND_TIMEOUT = 120


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A fresh tmpfs of DISK_MB, unmounted at teardown whatever the test did."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    try:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except FileNotFoundError:
        pytest.skip("no mount command")
    if proc.returncode != 0:
        pytest.skip(f"mount refused: {proc.stderr.strip() or proc.returncode}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True, timeout=30).returncode:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


def free_bytes(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize


def fill(disk: Path, leave: int = 0) -> Path:
    """A filler file that takes all the free space but `leave` bytes."""
    filler = disk / "filler"
    with filler.open("ab") as handle:
        while (room := free_bytes(disk) - leave) > 0:
            try:
                handle.write(b"\0" * min(CHUNK, room))
                handle.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
                break
    return filler


def leftovers(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.name.endswith(".tmp") or "tmp_" in p.name]


# -- the render cache ---------------------------------------------------------------------------


@pytest.fixture
def charts(tmp_path: Path) -> GitBuilder:
    """develop holds chart `app`; branch `pr` adds an init container without resources, which
    turns the `equal` profile's Guaranteed pod Burstable (a qos failure)."""
    g = GitBuilder(tmp_path / "charts")
    files = chart_files()
    for path, text in files.items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr")
    template = "app/templates/deployment.yaml"
    init = "      initContainers:\n        - name: init\n          image: busybox:1.36\n"
    g.write(template, files[template].replace("      containers:\n", init + "      containers:\n"))
    g.write("app/Chart.yaml", files["app/Chart.yaml"].replace("1.0.0", "1.0.1"))
    return g.commit("init container").checkout("develop")


def review(repo: Path, cache_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "review", "--repo", str(repo), "--base", "develop"]
        + ["--head", "pr", "--cache-dir", str(cache_dir), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )


def qos_failures(proc: subprocess.CompletedProcess[str]) -> list[tuple[str, str, str]]:
    report = validated(proc.stdout)
    return [
        (f["rule"], f["profile"], f["subject"])
        for f in report["findings"]
        if f["check"] == "qos" and f["severity"] == "failure"
    ]


def test_a_review_completes_on_a_full_disk_and_caches_once_space_is_back(
    disk: Path, charts: GitBuilder
) -> None:
    cache_dir = disk / "renders"
    cache_dir.mkdir()
    filler = fill(disk)

    full = review(charts.path, cache_dir)

    assert full.returncode == 1, full.stderr  # the review ran: its qos failure is the exit status
    assert qos_failures(full) == [("downgrade", "equal", "Deployment/default/release-app")]
    assert "render cache" in full.stderr and "No space left on device" in full.stderr
    assert list(cache_dir.iterdir()) == []  # no entry, no temp file

    filler.unlink()
    again = review(charts.path, cache_dir)

    assert again.returncode == 1, again.stderr
    assert qos_failures(again) == qos_failures(full)
    assert "No space left" not in again.stderr
    # two profiles, base and head, the entry of Helm's default Kubernetes version, and the render
    # that verified the downgrade's suggested fix (the head patched, on the downgraded profile)
    assert len(list(cache_dir.glob("*.json"))) == 4 + 1 + 1
    assert leftovers(cache_dir) == []


def test_the_cache_keeps_within_its_cap_and_survives_the_disk_filling_up(
    disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache_dir = disk / "renders"
    render = CachedRender({"t/a.yaml": "kind: Pod\n" + "x" * 20_000}, None)
    cap = 200_000
    cache = RenderCache(cache_dir, max_bytes=cap)
    keys = [CacheKey(f"tree{n}", "values", "helm", "release", "default") for n in range(300)]
    for key in keys[:100]:
        cache.put(key, render)
        assert sum(p.stat().st_size for p in cache_dir.iterdir()) <= cap

    filler = fill(disk)
    for key in keys[100:200]:  # a write fits in what its eviction freed, or fails: served alike
        cache.put(key, render)
        assert cache.get(key) == render
    assert "not stored: No space left on device" in caplog.text
    assert leftovers(cache_dir) == []

    filler.unlink()
    for key in keys[200:]:
        cache.put(key, render)
    assert RenderCache(cache_dir).get(keys[-1]) == render
    assert sum(p.stat().st_size for p in cache_dir.iterdir()) <= cap
    assert leftovers(cache_dir) == []


# -- the mirrors --------------------------------------------------------------------------------


def add_noise(g: GitBuilder, name: str, size: int) -> str:
    """Commit `size` bytes that do not compress: a repository too large for what is left."""
    (g.path / name).write_bytes(os.urandom(size))
    return g.commit(f"add {name}").sha()


def test_a_clone_that_fills_the_disk_leaves_nothing_and_succeeds_once_space_is_back(
    disk: Path, tmp_path: Path
) -> None:
    upstream = GitBuilder(tmp_path / "upstream")
    head = add_noise(upstream, "noise.bin", 3 * CHUNK)
    mirrors = Mirrors(disk / "mirrors")
    filler = fill(disk, leave=CHUNK)
    before = free_bytes(disk)

    with pytest.raises(MirrorDiskFull, match=r"no space left on the mirrors' disk \(DATA_DIR/m"):
        mirrors.sync("acme/charts", str(upstream.path), token=None)

    assert not mirrors.path("acme/charts").exists()
    assert free_bytes(disk) == before  # nothing half-written stays
    filler.unlink()
    repo = mirrors.sync("acme/charts", str(upstream.path), token=None)
    assert repo.resolve("refs/heads/develop") == head


@pytest.mark.parametrize("unpack", ["loose", "pack"])
def test_a_fetch_that_fills_the_disk_leaves_the_mirror_as_it_was(
    disk: Path, tmp_path: Path, unpack: str
) -> None:
    upstream = GitBuilder(tmp_path / "upstream")
    old = upstream.write("a.txt", "one\n").commit("one").sha()
    mirrors = Mirrors(disk / "mirrors")
    path = mirrors.sync("acme/charts", str(upstream.path), token=None).path
    # Few objects arrive loose (unpack-objects); many, as a pack (index-pack's tmp_pack_*).
    limit = "1" if unpack == "pack" else "1000"
    subprocess.run(["git", "-C", str(path), "config", "fetch.unpackLimit", limit], check=True)
    for n in range(3):
        new = add_noise(upstream, f"noise{n}.bin", CHUNK)
    filler = fill(disk, leave=CHUNK)
    before = free_bytes(disk)

    with pytest.raises(MirrorDiskFull):
        mirrors.sync("acme/charts", str(upstream.path), token=None)

    assert GitRepo(path).resolve("refs/heads/develop") == old
    assert leftovers(path) == []
    assert free_bytes(disk) >= before  # the objects it did write are gone
    filler.unlink()
    assert mirrors.sync("acme/charts", str(upstream.path), token=None).resolve("develop") == new


# -- the App end to end -------------------------------------------------------------------------


def reviewed(github: FakeGitHub, head: str) -> bool:
    runs = github.check_runs(REPO, head)
    return len(runs) >= len(RUNS) and all(r.status == "completed" for r in runs)


def qos_conclusion(github: FakeGitHub, head: str) -> str | None:
    return family_verdicts(github.check_runs(REPO, head))["chart-review/qos"]


def test_a_delivery_on_a_full_disk_is_refused_with_503_and_its_redelivery_reviewed(
    disk: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    with running_app(app_settings(github, disk / "data")) as app:
        payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
        filler = fill(disk)

        refused = app.deliver("pull_request", payload, delivery="full-1")

        assert refused.status_code == 503  # GitHub shows it failed; an operator can redeliver
        assert refused.json() == {
            "error": "queue unavailable: OperationalError: database or disk is full"
        }
        assert app.idle() and github.check_runs(REPO, scenario.head) == []
        filler.unlink()
        again = app.deliver("pull_request", payload, delivery="full-1")  # GitHub's redelivery

        assert again.status_code == 202, again.text
        wait_for(lambda: reviewed(github, scenario.head), timeout=60, what="the review")
        assert qos_conclusion(github, scenario.head) == "failure"


def test_a_job_the_disk_cannot_hold_waits_for_space_and_is_reviewed_then(
    disk: Path, github: FakeGitHub, scenario: Scenario, caplog: pytest.LogCaptureFixture
) -> None:
    git = scenario.git.checkout("wait-for-mysql")
    head = add_noise(git, "noise.bin", 3 * CHUNK)  # the mirror cannot hold it; the queue can
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)
    settings = app_settings(github, disk / "data", disk_full_retry=0.5)
    with running_app(settings) as app:
        filler = fill(disk, leave=CHUNK // 4)
        payload = pull_request_event("opened", REPO, scenario.clone_url, 1, head)

        assert app.deliver("pull_request", payload, delivery="full-2").status_code == 202
        wait_for(
            lambda: "ReviewJob waits for disk space" in caplog.text,
            timeout=60,
            what="the job to stop on the full disk",
        )
        assert github.check_runs(REPO, head) == []
        assert not (disk / "data" / "mirrors" / "acme" / "charts.git").exists()
        assert leftovers(disk / "data") == []
        filler.unlink()

        wait_for(lambda: reviewed(github, head), timeout=60, what="the review once space is back")
        assert qos_conclusion(github, head) == "failure"
        duplicate = app.deliver("pull_request", payload, delivery="full-2")
        assert duplicate.json() == {"outcome": "duplicate delivery"}
