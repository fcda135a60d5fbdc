"""Bare mirrors under DATA_DIR: cloned once, fetched incrementally, rebuilt when damaged."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from bot.git.mirror import MirrorError, Mirrors, _git_env
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
    env = _git_env("https://github.com/acme/charts.git", "ghs_secret")

    assert env["GIT_CONFIG_KEY_0"] == "http.extraHeader"
    scheme, _, encoded = env["GIT_CONFIG_VALUE_0"].partition(" Basic ")
    assert scheme == "Authorization:"
    assert base64.b64decode(encoded).decode() == "x-access-token:ghs_secret"
    assert env["GIT_TERMINAL_PROMPT"] == "0"


def test_no_token_header_for_a_local_source() -> None:
    assert "GIT_CONFIG_COUNT" not in _git_env("/srv/git/charts", "ghs_secret")
