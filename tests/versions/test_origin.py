"""Where develop's chart version came from (`version_origin`): the commit that set it and the PR that
landed it, read from develop's history once per develop commit id."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from bot.git.objects import Commit
from bot.git.repo import GitRepo
from bot.versions.claims import version_origin
from tests.support.gitbuilder import GitBuilder
from tests.support.memos import ColdMemos
from tests.support.version_scenario import write_chart

APP = "charts/app"


class CountingRepo(GitRepo):
    """A real repository that counts the history walks asked of it."""

    walks = 0

    def commits(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> Iterator[Commit]:
        self.walks += 1
        return super().commits(rev_range, path, max_count)


def develop_history(root: Path) -> GitBuilder:
    g = GitBuilder(root)
    write_chart(g, APP, "app", "1.0.0").commit("app 1.0.0 (#1)")
    write_chart(g, APP, "app", "1.1.0").commit("app 1.1.0 (#2)")
    g.write(f"{APP}/values.yaml", "replicas: 2\n").commit("values only (#3)")
    return g


def test_the_origin_names_the_commit_and_pr_that_set_the_version(
    tmp_path: Path, cold_memos: ColdMemos
) -> None:
    cold_memos()
    g = develop_history(tmp_path)
    origin = version_origin(GitRepo(tmp_path), g.sha(), APP, "1.1.0")
    assert origin is not None
    assert (origin.commit.sha, origin.pr) == (g.sha("HEAD~1"), 2)
    assert version_origin(GitRepo(tmp_path), g.sha(), APP, "9.9.9") is None


def test_the_origin_is_read_once_per_develop_commit(tmp_path: Path, cold_memos: ColdMemos) -> None:
    cold_memos()
    g = develop_history(tmp_path)
    repo = CountingRepo(tmp_path)
    first = version_origin(repo, g.sha(), APP, "1.1.0")
    # Asked again (the suggestion's proof, the App's next review): no second walk, even for a
    # version develop does not carry, whose answer is None.
    assert version_origin(repo, g.sha(), APP, "1.1.0") == first
    version_origin(repo, g.sha(), APP, "9.9.9")
    version_origin(repo, g.sha(), APP, "9.9.9")
    assert repo.walks == 2

    # develop moves on: its new id is a new history, read again, and the new run is found.
    write_chart(g, APP, "app", "1.2.0").commit("app 1.2.0 (#4)")
    moved = version_origin(repo, g.sha(), APP, "1.2.0")
    assert moved is not None and moved.pr == 4
    assert repo.walks == 3


def test_a_branch_name_is_read_each_time(tmp_path: Path, cold_memos: ColdMemos) -> None:
    """A name is no commit id: what it points at moves, so its answer is never remembered."""
    cold_memos()
    g = develop_history(tmp_path)
    repo = CountingRepo(tmp_path)
    assert version_origin(repo, "develop", APP, "1.1.0") is not None
    write_chart(g, APP, "app", "1.1.0").write(f"{APP}/README.md", "x\n").commit("readme (#5)")
    origin = version_origin(repo, "develop", APP, "1.1.0")
    assert origin is not None and origin.pr == 2
    assert repo.walks == 2
