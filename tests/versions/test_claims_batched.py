"""Open PRs' claims asked of the repository in batches (one rev-list, one cat-file batch) are the
claims asked PR by PR: the same repository seen through a plain `GitView` gives the reference."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from bot.charts.read_ahead import read_ahead
from bot.git.fork_points import fork_points
from bot.git.objects import Commit, GitView, Tree
from bot.git.repo import GitRepo
from bot.model.context import OpenPR
from bot.versions.claims import BatchGit, open_claims
from tests.support.gitbuilder import GitBuilder
from tests.support.memos import ColdMemos
from tests.support.version_scenario import chart_yaml, write_chart

APP = "charts/app"


class PlainView:
    """The repository through `GitView` alone: no batches, so claims are made PR by PR, with a
    merge base and an ancestry query each, as they always were."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo

    def tree(self, commit: str) -> Tree:
        return self.repo.tree(commit)

    def resolve(self, ref: str) -> str | None:
        return self.repo.resolve(ref)

    def merge_base(self, a: str, b: str) -> str | None:
        return self.repo.merge_base(a, b)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return self.repo.is_ancestor(ancestor, descendant)

    def merge_conflicts(self, ours: str, theirs: str) -> tuple[str, ...]:
        return self.repo.merge_conflicts(ours, theirs)

    def tagged(self, names: Sequence[str]) -> tuple[str, ...]:
        return self.repo.tagged(names)

    def commits(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> Iterator[Commit]:
        return self.repo.commits(rev_range, path, max_count)

    def log(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> tuple[Commit, ...]:
        return self.repo.log(rev_range, path, max_count)


def many_prs(root: Path) -> tuple[GitBuilder, dict[int, str]]:
    """develop with charts/app and docs; PRs of every shape a claim can take, by number → branch."""
    g = GitBuilder(root)
    write_chart(g, APP, "app", "1.0.0").write("docs/guide.md", "# Guide\n").commit("app 1.0.0")
    first = g.sha()
    prs = {}

    def pr(number: int, from_: str = first) -> GitBuilder:
        prs[number] = f"pr-{number}"
        return g.branch(f"pr-{number}", from_)

    pr(1).write(f"{APP}/values.yaml", "replicas: 3\n").write(
        f"{APP}/Chart.yaml", chart_yaml("1.0.1", name="app")
    ).commit("bump")
    pr(2).write("docs/guide.md", "# Guide\n\nMore.\n").commit("docs only")
    pr(3).write(f"{APP}/templates/service.yaml", "kind: Service\n").commit("no bump")
    pr(4).write(f"{APP}/values.yaml", "replicas: 4\n").write(
        f"{APP}/Chart.yaml", chart_yaml("1.1.0", name="app")
    ).commit("merged")
    pr(6).remove(f"{APP}/Chart.yaml").remove(f"{APP}/values.yaml").remove(
        f"{APP}/templates/deployment.yaml"
    )
    g.remove(f"{APP}/ci/default-values.yaml").remove(f"{APP}/tests/values_test.yaml").remove(
        f"{APP}/README.md"
    ).commit("remove app")
    pr(7).write("charts/new/Chart.yaml", chart_yaml("0.1.0", name="new")).commit("new chart")
    pr(8).symlink(f"{APP}/linked.yaml", "values.yaml").commit("a symlink")
    pr(9).write(f"{APP}/hook.sh", "echo hi\n").commit("a script")
    os.chmod(g.path / APP / "hook.sh", 0o755)
    g.commit("the script runs")
    pr(10).write(f"{APP}/README.md", "# app\n\nsquashed\n").write(
        f"{APP}/Chart.yaml", chart_yaml("1.0.2", name="app")
    ).commit("squashed")

    g.checkout("develop").merge("pr-4", "Merge pull request #4 from org/pr-4")
    g.write(f"{APP}/README.md", "# app\n\nsquashed\n").write(
        f"{APP}/Chart.yaml", chart_yaml("1.1.1", name="app")
    )
    g.commit("squashed (#10)")
    # #5 merged develop in after #4 landed: two merge-base candidates, the newer one wins.
    pr(5).write(f"{APP}/ci/default-values.yaml", "replicas: 5\n").commit("five").merge("develop")
    g.write(f"{APP}/Chart.yaml", chart_yaml("1.2.0", name="app")).commit(
        "bump after merging develop"
    )
    # #12 merged #4's branch (in develop by a merge commit, off its first-parent line) into itself.
    pr(12).merge("pr-4").write(f"{APP}/ci/default-values.yaml", "replicas: 12\n").commit("twelve")
    g.checkout("develop").write("docs/later.md", "# Later\n").commit("develop moves on")
    # #11 has no history in common with develop: an unrelated root.
    g.run_git("checkout", "-q", "--orphan", "pr-11")
    prs[11] = "pr-11"
    g.write(f"{APP}/Chart.yaml", chart_yaml("9.0.0", name="app")).commit("unrelated")
    g.checkout("develop")
    return g, prs


@pytest.fixture
def built(tmp_path: Path) -> tuple[GitBuilder, list[OpenPR]]:
    g, prs = many_prs(tmp_path / "repo")
    return g, [OpenPR(number=n, head=g.sha(b), ref=b) for n, b in sorted(prs.items())]


@pytest.mark.parametrize("chart", [APP, "charts/new", "docs"])
def test_batched_claims_are_the_claims_made_one_by_one(built, chart: str) -> None:
    g, prs = built
    repo = GitRepo(g.path)
    assert isinstance(repo, BatchGit) and not isinstance(PlainView(repo), BatchGit)
    develop = g.sha("develop")
    batched = open_claims(repo, chart, prs, develop)
    assert batched == open_claims(PlainView(repo), chart, prs, develop)
    assert [pr.number for pr, _ in batched] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12]  # #4 merged


def test_each_shape_of_claim_on_the_chart(built) -> None:
    g, prs = built
    claims = {pr.number: c for pr, c in open_claims(GitRepo(g.path), APP, prs, g.sha("develop"))}
    seen = {
        n: (c.base and c.base.version, c.head and c.head.version, c.changed)
        for n, c in claims.items()
    }
    assert seen[1] == ("1.0.0", "1.0.1", (f"{APP}/Chart.yaml", f"{APP}/values.yaml"))
    assert seen[2] == ("1.0.0", "1.0.0", ())
    assert seen[3] == ("1.0.0", "1.0.0", (f"{APP}/templates/service.yaml",))
    # Measured from develop as merged into it (1.1.1), not from where #5 first branched.
    assert seen[5] == ("1.1.1", "1.2.0", (f"{APP}/Chart.yaml", f"{APP}/ci/default-values.yaml"))
    assert seen[6][1] is None and f"{APP}/Chart.yaml" in seen[6][2]
    assert seen[8] == ("1.0.0", "1.0.0", (f"{APP}/linked.yaml",))
    assert seen[9] == ("1.0.0", "1.0.0", (f"{APP}/hook.sh",))  # a mode alone is no content change
    # No merge base: every file of the chart at head is new.
    assert seen[11][:2] == (None, "9.0.0") and len(seen[11][2]) == 6
    assert claims[3].content == (f"{APP}/templates/service.yaml",)


def test_a_chart_at_the_repository_root(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("Chart.yaml", chart_yaml("2.0.0", name="root")).write("values.yaml", "a: 1\n").commit(
        "root"
    )
    g.branch("bump").write("Chart.yaml", chart_yaml("2.0.1", name="root")).commit("bump")
    g.branch("values", "develop").write("values.yaml", "a: 2\n").commit("values")
    repo = GitRepo(g.path)
    prs = [OpenPR(1, g.sha("bump")), OpenPR(2, g.sha("values"))]
    for chart in (".", ""):
        batched = open_claims(repo, chart, prs, g.sha("develop"))
        assert batched == open_claims(PlainView(repo), chart, prs, g.sha("develop"))
        assert [c.changed for _, c in batched] == [("Chart.yaml",), ("values.yaml",)]


def test_the_pr_under_review_is_left_out_of_the_batch(built) -> None:
    g, prs = built
    claims = open_claims(GitRepo(g.path), APP, prs, g.sha("develop"), exclude_head=g.sha("pr-1"))
    assert 1 not in [pr.number for pr, _ in claims]


def test_fork_points_follow_develop_as_it_moves(built) -> None:
    """Remembered by commit ids: a develop that moved on is a new question, answered afresh."""
    g, _ = built
    repo = GitRepo(g.path)
    head = g.sha("pr-2")
    before = fork_points(repo, g.sha("develop"), [head])[head]
    assert (before.contained, before.merge_base) == (False, repo.merge_base("develop", head))
    g.merge("pr-2", "Merge pull request #2 from org/pr-2")
    after = fork_points(repo, g.sha("develop"), [head, g.sha("pr-5"), g.sha("pr-1")])
    assert after[head].contained and after[head].merge_base is None
    assert after[g.sha("pr-5")].merge_base == repo.merge_base("develop", "pr-5")
    assert after[g.sha("pr-1")].merge_base == repo.merge_base("develop", "pr-1")
    assert fork_points(repo, g.sha("develop~1"), [head])[head] == before  # the old answer stands


def test_several_merge_base_candidates_are_ordered_as_git_orders_them(built) -> None:
    """#5 merged develop in (its candidates on develop's first-parent line: the newest wins); #12
    merged a branch that develop took by a merge commit (off that line: git decides)."""
    g, _ = built
    repo = GitRepo(g.path)
    heads = [g.sha("pr-5"), g.sha("pr-12")]
    points = fork_points(repo, g.sha("develop"), heads)
    assert [points[h].merge_base for h in heads] == [repo.merge_base("develop", h) for h in heads]
    assert points[g.sha("pr-12")].merge_base == g.sha("pr-4")


def test_a_head_git_does_not_know_falls_back_to_its_own_queries(built) -> None:
    g, _ = built
    repo = GitRepo(g.path)
    unknown = "0" * 40
    point = fork_points(repo, g.sha("develop"), [unknown, g.sha("pr-2")])
    assert point[unknown].merge_base is None and not point[unknown].contained
    assert point[g.sha("pr-2")].merge_base == repo.merge_base("develop", "pr-2")


def _plain_view_is_a_git_view(view: PlainView) -> GitView:
    return view  # mypy: the reference view is a GitView


@pytest.mark.parametrize("chart", [APP, "charts/new"])
def test_what_the_engine_reads_ahead_is_all_the_claims_read(
    built, chart: str, cold_memos: ColdMemos
) -> None:
    """While the charts render, the engine reads the open PRs' fork points and chart directories
    (bot/charts/read_ahead.py); the claims then ask git for nothing more, and are the same."""
    g, prs = built
    develop = g.sha("develop")
    expected = open_claims(PlainView(GitRepo(g.path)), chart, prs, develop)
    cold_memos()
    repo = GitRepo(g.path)
    read_ahead(repo, develop, prs, [chart])
    asked: list[object] = []
    for name in ("_read_objects", "_object_infos", "_run"):
        inner = getattr(repo, name)

        def counting(*args: object, _inner=inner, **kwargs: object) -> object:
            asked.append(args)
            return _inner(*args, **kwargs)

        setattr(repo, name, counting)
    assert open_claims(repo, chart, prs, develop) == expected
    assert asked == []


def test_read_ahead_leaves_a_failure_to_the_check_that_asks(built) -> None:
    g, prs = built
    repo = GitRepo(g.path)
    unknown = OpenPR(number=99, head="0" * 40, ref="gone")
    read_ahead(repo, g.sha("develop"), [*prs, unknown], [APP])  # no exception
    claims = dict(
        (pr.number, claim)
        for pr, claim in open_claims(repo, APP, [*prs, unknown], g.sha("develop"))
    )
    assert 1 in claims


class CountingRepo(GitRepo):
    """The repository, counting the `git merge-base` processes asked of it."""

    merge_bases = 0

    def merge_base(self, a: str, b: str) -> str | None:
        self.merge_bases += 1
        return super().merge_base(a, b)


def test_candidates_older_than_the_first_read_are_ordered_on_a_deeper_one(
    built, monkeypatch: pytest.MonkeyPatch, cold_memos: ColdMemos
) -> None:
    """Found on bitnami/charts: PRs open since 2016 that merged develop in have candidates tens of
    thousands of commits down develop's line; each cost a `git merge-base` of 0.3 s. The line is
    now read on down to them (one stream), and git is asked only of candidates off that line."""
    import bot.git.fork_points as fork_points_module

    g, _ = built
    cold_memos()
    monkeypatch.setattr(fork_points_module, "FIRST_PARENTS", 1)  # every candidate is "older"
    repo = CountingRepo(g.path)
    heads = [g.sha("pr-5"), g.sha("pr-12")]
    points = fork_points(repo, g.sha("develop"), heads)
    assert [points[h].merge_base for h in heads] == [repo.merge_base("develop", h) for h in heads]
    # #5's candidates are all on the line: ordered there. #12's are not: git decides, once.
    assert repo.merge_bases == 1 + len(heads)

    cold_memos()
    monkeypatch.setattr(fork_points_module, "DEEP_FIRST_PARENTS", 1)  # no deeper read either
    repo = CountingRepo(g.path)
    fork_points(repo, g.sha("develop"), heads)
    assert repo.merge_bases == 2
