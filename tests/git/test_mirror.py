"""Bare mirrors under DATA_DIR: cloned once, fetched incrementally, rebuilt when damaged; a linked
repository's bounded in size and removed once unused; all of them within a cap, least recently
used out first; nothing half-written left by a failed fetch (on a real full disk:
tests/app/test_full_disk.py)."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest

from bot.git.fetch import disk_bytes, disk_full, git_env
from bot.git.mirror import (
    LINKED_STAMP,
    USE_STAMP,
    MirrorDiskFull,
    MirrorError,
    Mirrors,
    MirrorTooLarge,
)
from tests.support.gitbuilder import GitBuilder


@pytest.fixture
def upstream(tmp_path: Path) -> GitBuilder:
    git = GitBuilder(tmp_path / "upstream")
    git.write("a.txt", "one\n").commit("one")
    git.branch("feature").write("a.txt", "two\n").commit("two").pull_ref(7, "feature")
    return git.checkout("develop")


def test_a_mirror_holds_branches_tags_and_pull_heads(tmp_path: Path, upstream: GitBuilder) -> None:
    upstream.tag("v1.0.0", "develop")
    repo = Mirrors(tmp_path / "mirrors").sync("acme/charts", str(upstream.path), token=None)

    assert repo.path == tmp_path / "mirrors" / "acme" / "charts.git"
    assert repo.resolve("refs/heads/develop") == upstream.sha("develop")
    assert repo.resolve("refs/pull/7/head") == upstream.sha("feature")
    assert "v1.0.0" in repo.tags()


def test_a_second_sync_fetches_what_moved(tmp_path: Path, upstream: GitBuilder) -> None:
    mirrors = Mirrors(tmp_path / "mirrors")
    mirrors.sync("acme/charts", str(upstream.path), token=None)
    new = upstream.write("b.txt", "b\n").commit("b").sha()

    repo = mirrors.sync("acme/charts", str(upstream.path), token=None, want=[new])

    assert repo.resolve("refs/heads/develop") == new


def _graph_layers(mirror: Path) -> list[str]:
    chain = mirror / "objects/info/commit-graphs/commit-graph-chain"
    return chain.read_text().split() if chain.is_file() else []


def test_each_sync_brings_the_commit_graph_up_to_the_refs(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    # Reviews walk history in every check; the graph lets git skip inflating commits.
    mirrors = Mirrors(tmp_path / "mirrors")
    path = mirrors.sync("acme/charts", str(upstream.path), token=None).path
    first = _graph_layers(path)
    assert first
    upstream.write("b.txt", "b\n").commit("b")
    mirrors.sync("acme/charts", str(upstream.path), token=None)
    assert _graph_layers(path) != first
    verify = subprocess.run(
        ["git", "-C", str(path), "commit-graph", "verify"], capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stderr


def test_a_commit_graph_that_cannot_be_written_leaves_the_sync_whole(
    tmp_path: Path, upstream: GitBuilder, caplog: pytest.LogCaptureFixture
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors")
    path = mirrors.sync("acme/charts", str(upstream.path), token=None).path
    stale = path / "objects/info/commit-graphs/commit-graph-chain.lock"
    stale.write_text("")  # as a killed write leaves it: git writes no graph past it
    before = _graph_layers(path)
    upstream.write("b.txt", "b\n").commit("b")
    mirrors.sync("acme/charts", str(upstream.path), token=None)
    assert not stale.exists() and _graph_layers(path) != before
    graphs = path / "objects/info/commit-graphs"
    shutil.rmtree(graphs)
    graphs.write_text("")  # where git cannot write a layer
    new = upstream.write("c.txt", "c\n").commit("c").sha()
    repo = mirrors.sync("acme/charts", str(upstream.path), token=None)
    assert repo.resolve("refs/heads/develop") == new
    assert "commit-graph not written" in caplog.text


def test_a_damaged_mirror_is_rebuilt(tmp_path: Path, upstream: GitBuilder) -> None:
    mirrors = Mirrors(tmp_path / "mirrors")
    path = mirrors.sync("acme/charts", str(upstream.path), token=None).path
    shutil.rmtree(path / "objects")
    (path / "HEAD").write_text("garbage")

    repo = mirrors.sync("acme/charts", str(upstream.path), token=None)

    assert repo.tree(upstream.sha("develop")).text("a.txt") == "one\n"


def test_an_unreachable_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="git fetch failed"):
        Mirrors(tmp_path / "mirrors").sync("acme/gone", str(tmp_path / "nowhere"), token=None)


def test_a_name_that_would_leave_the_mirror_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MirrorError, match="not a repository name"):
        Mirrors(tmp_path).path("../etc")


def test_the_token_travels_as_a_header_in_the_environment_not_the_url() -> None:
    env = git_env("https://github.com/acme/charts.git", "ghs_secret")

    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    scheme, _, encoded = env["GIT_CONFIG_VALUE_0"].partition(" Basic ")
    assert scheme == "Authorization:"
    assert base64.b64decode(encoded).decode() == "x-access-token:ghs_secret"
    assert env["GIT_TERMINAL_PROMPT"] == "0"


def test_no_token_header_for_a_local_source() -> None:
    assert "GIT_CONFIG_COUNT" not in git_env("/srv/git/charts", "ghs_secret")


def _age(path: Path, days: float) -> None:
    """Make a linked mirror look last used `days` ago."""
    stamp = path / LINKED_STAMP
    old = time.time() - days * 86400
    os.utime(stamp, (old, old))


def test_a_linked_mirror_larger_than_the_limit_is_refused_and_removed(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_max_bytes=1)
    with pytest.raises(MirrorTooLarge, match=r"^acme/big is larger than "):
        mirrors.sync_linked("acme/big", str(upstream.path), token=None)
    assert not mirrors.path("acme/big").exists()


def test_a_reviewed_repositorys_mirror_is_kept_when_too_large_as_a_link(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_max_bytes=1)
    mirrors.sync("acme/charts", str(upstream.path), token=None)
    with pytest.raises(MirrorTooLarge):
        mirrors.sync_linked("acme/charts", str(upstream.path), token=None)
    assert mirrors.path("acme/charts").joinpath("HEAD").is_file()


def test_the_size_limit_is_checked_before_a_fetch_too(tmp_path: Path) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_max_bytes=200 * 2**20)
    mirrors.check_linked_size("acme/x", 200 * 2**20)  # at the limit: fine
    with pytest.raises(
        MirrorTooLarge, match=r"^acme/x is larger than 200 MB, the limit for a link$"
    ):
        mirrors.check_linked_size("acme/x", 200 * 2**20 + 1)


def test_linked_mirrors_unused_for_a_week_are_removed_at_the_next_linked_sync(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_unused=timedelta(days=7))
    url = str(upstream.path)
    stale = mirrors.sync_linked("acme/stale", url, token=None).path
    recent = mirrors.sync_linked("acme/recent", url, token=None).path
    own = mirrors.sync("acme/charts", url, token=None).path
    _age(stale, 8)
    _age(recent, 6)
    os.utime(own, (0, 0))  # however old: the mirror of a reviewed repository stays

    mirrors.sync_linked("acme/other", url, token=None)

    assert not stale.exists()
    assert recent.exists() and own.exists()


def test_a_linked_mirror_in_use_is_not_pruned_and_its_sync_renews_it(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_unused=timedelta(days=7))
    path = mirrors.sync_linked("acme/stale", str(upstream.path), token=None).path
    _age(path, 8)

    repo = mirrors.sync_linked("acme/stale", str(upstream.path), token=None)

    assert repo.resolve("refs/heads/develop") == upstream.sha("develop")
    assert time.time() - (path / LINKED_STAMP).stat().st_mtime < 60
    assert mirrors.prune_linked() == []


def test_reviewing_a_linked_repository_makes_its_mirror_permanent(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", linked_unused=timedelta(days=7))
    path = mirrors.sync_linked("acme/charts", str(upstream.path), token=None).path
    mirrors.sync("acme/charts", str(upstream.path), token=None)
    mirrors.sync_linked("acme/charts", str(upstream.path), token=None)

    assert not (path / LINKED_STAMP).exists()
    assert mirrors.prune_linked() == []


def _synced(path: Path, hours_ago: float) -> None:
    """Make a mirror look last synced `hours_ago`."""
    old = time.time() - hours_ago * 3600
    os.utime(path / USE_STAMP, (old, old))


def test_past_the_cap_the_least_recently_used_mirrors_are_removed_whole(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    url = str(upstream.path)
    probe = Mirrors(tmp_path / "probe").sync("acme/x", url, token=None).path
    one = disk_bytes(probe)  # what each mirror of `upstream` takes
    mirrors = Mirrors(tmp_path / "mirrors", max_bytes=3 * one, in_use=timedelta(hours=1))
    oldest = mirrors.sync("acme/oldest", url, token=None).path
    older = mirrors.sync_linked("acme/older", url, token=None).path  # a link counts alike
    recent = mirrors.sync("acme/recent", url, token=None).path
    _synced(oldest, 5)
    _synced(older, 4)
    _synced(recent, 3)

    new = mirrors.sync("acme/new", url, token=None).path

    assert not oldest.exists()
    assert older.exists() and recent.exists() and new.exists()


def test_a_mirror_synced_within_the_in_use_window_is_kept_past_the_cap(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors", max_bytes=1, in_use=timedelta(hours=1))
    first = mirrors.sync("acme/first", str(upstream.path), token=None).path
    second = mirrors.sync("acme/second", str(upstream.path), token=None).path

    assert first.exists() and second.exists()  # a review may still be reading the first
    _synced(first, 2)
    assert mirrors.evict(keep=second) == [first]


def test_a_clone_that_fails_leaves_no_directory(tmp_path: Path) -> None:
    mirrors = Mirrors(tmp_path / "mirrors")
    with pytest.raises(MirrorError):
        mirrors.sync("acme/gone", str(tmp_path / "nowhere"), token=None)

    assert not mirrors.path("acme/gone").exists()


def test_what_a_killed_fetch_left_is_removed_at_the_next_sync(
    tmp_path: Path, upstream: GitBuilder
) -> None:
    mirrors = Mirrors(tmp_path / "mirrors")
    path = mirrors.sync("acme/charts", str(upstream.path), token=None).path
    left = [
        path / "objects" / "pack" / "tmp_pack_Ab12Cd",
        path / "objects" / "ab" / "tmp_obj_Ef34Gh",
        path / "refs" / "heads" / "develop.lock",
        path / "packed-refs.lock",
    ]
    for leftover in left:
        leftover.parent.mkdir(parents=True, exist_ok=True)
        leftover.write_bytes(b"half")

    repo = mirrors.sync("acme/charts", str(upstream.path), token=None)

    assert [p for p in left if p.exists()] == []
    assert repo.resolve("refs/heads/develop") == upstream.sha("develop")


def test_a_full_disk_is_a_clear_error_without_the_path(tmp_path: Path) -> None:
    error = disk_full(tmp_path / "mirrors" / "acme" / "charts.git", "git fetch")

    assert isinstance(error, MirrorDiskFull) and isinstance(error, MirrorError)
    assert str(error) == (
        "git fetch failed: no space left on the mirrors' disk (DATA_DIR/mirrors); free some space "
        "there or lower MIRRORS_MAX_MB"
    )
