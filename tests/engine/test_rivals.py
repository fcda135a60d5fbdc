"""bot/model/rivals.py: the other open PRs a review compares with, on a real repository."""

from __future__ import annotations

from pathlib import Path

from bot.git.repo import GitRepo
from bot.model.context import OpenPR
from bot.model.rivals import branch_name, comparable_prs
from tests.support.gitbuilder import GitBuilder


def test_branch_names_are_read_from_any_of_their_refs() -> None:
    assert {branch_name(r) for r in ("main", "origin/main", "refs/heads/main")} == {"main"}
    assert branch_name("refs/remotes/origin/release-1.x") == "release-1.x"


def test_only_prs_into_the_same_branch_count_each_head_once(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "a\n").commit("init")
    g.branch("release-1.x").write("r.txt", "r\n").commit("release moves").checkout("develop")
    g.branch("fix").write("b.txt", "b\n").commit("the fix").checkout("develop")
    g.branch("other").write("c.txt", "c\n").commit("another").checkout("develop")
    repo = GitRepo(g.path)
    target, fix, other = g.sha("develop"), g.sha("fix"), g.sha("other")
    prs = [
        OpenPR(7, fix, "fix", base_ref="develop"),
        OpenPR(5, fix, "fix", base_ref="develop"),  # the same head under two numbers
        OpenPR(8, fix, "backport", base_ref="release-1.x"),  # the backport: another branch
        OpenPR(9, other, "other", base_ref="refs/heads/develop"),
        OpenPR(0, g.sha("release-1.x"), "unknown-base"),  # no base known: counts
        OpenPR(10, g.sha("develop"), "gone", base_ref="no-such-branch"),  # cannot tell: counts
        OpenPR(11, other, "mine"),  # same head as the PR under review
    ]
    kept = comparable_prs(repo, target, "origin/develop", other, prs)
    assert [(p.number, p.ref) for p in kept] == [(5, "fix"), (0, "unknown-base"), (10, "gone")]
