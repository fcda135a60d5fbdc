"""Which branch is develop, and which refs are PR heads: bot/git/refs.py on real repositories."""

from __future__ import annotations

from pathlib import Path

from bot.git.refs import Branch, integration_branch, pull_number
from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder


def repo_with(tmp_path: Path, *branches: str, first: str = "main") -> GitBuilder:
    g = GitBuilder(tmp_path / "r", branch=first).write("a.txt", "a\n").commit("init")
    for name in branches:
        g.branch(name, first)
    return g.checkout(first)


def test_the_configured_branch_wins_when_it_exists(tmp_path: Path) -> None:
    g = repo_with(tmp_path, "develop", "integration")
    repo = GitRepo(g.path)
    assert integration_branch(repo, "integration") == Branch("integration", g.sha("integration"))
    assert integration_branch(repo, "gone") == Branch("develop", g.sha("develop"))


def test_develop_then_a_remote_develop_then_the_default_branch(tmp_path: Path) -> None:
    g = repo_with(tmp_path)
    repo = GitRepo(g.path)
    assert integration_branch(repo) == Branch("main", g.sha("main"))
    g.run_git("update-ref", "refs/remotes/origin/develop", g.sha("main"))
    assert integration_branch(repo) == Branch("origin/develop", g.sha("main"))
    g.branch("develop", "main")
    assert integration_branch(repo) == Branch("develop", g.sha("develop"))


def test_the_default_branch_the_caller_knows_beats_head(tmp_path: Path) -> None:
    g = repo_with(tmp_path, "trunk")
    repo = GitRepo(g.path)
    assert integration_branch(repo, default_branch="trunk") == Branch("trunk", g.sha("trunk"))


def test_refs_already_resolved_are_not_asked_again(tmp_path: Path) -> None:
    g = repo_with(tmp_path, "develop")
    known: dict[str, str | None] = {"develop": None}  # the caller found no develop
    assert integration_branch(GitRepo(g.path), known=known) == Branch("main", g.sha("main"))


def test_pull_numbers() -> None:
    assert pull_number("refs/pull/12/head") == 12
    assert pull_number("refs/pull/12/merge") is None
    assert pull_number("refs/heads/pull/12/head") is None


def test_ct_s_target_branch_comes_after_the_configured_one_and_before_develop(
    tmp_path: Path,
) -> None:
    g = repo_with(tmp_path, "develop", "integration")
    repo = GitRepo(g.path)
    ct_refs = ("main", "origin/main")  # a ct.yaml's `target-branch: main`
    assert integration_branch(repo, target_refs=ct_refs) == Branch("main", g.sha("main"))
    assert integration_branch(repo, "integration", target_refs=ct_refs) == Branch(
        "integration", g.sha("integration")
    )
    # Only a clone's remote branch by that name: ct compares with <remote>/<target-branch> too.
    assert integration_branch(repo, target_refs=("trunk", "origin/trunk")) == Branch(
        "develop", g.sha("develop")
    )
    g.run_git("update-ref", "refs/remotes/origin/trunk", g.sha("main"))
    assert integration_branch(repo, target_refs=("trunk", "origin/trunk")) == Branch(
        "origin/trunk", g.sha("main")
    )
