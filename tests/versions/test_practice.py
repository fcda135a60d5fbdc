"""bot/versions/practice.py: what the integration branch's history says about bumping, on real
repositories."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from bot.engine.ct_config import NO_CT, CtConfig
from bot.git.objects import Commit, Tree
from bot.git.repo import GitRepo
from bot.lru import clear_all
from bot.versions.practice import MIN_EVIDENCE, Basis, Practice, chart_practice
from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import write_chart
from tests.versions.histories import chart_repo, land, release, touch_ci


def practice(g: GitBuilder, chart: str = "client", ct: CtConfig = NO_CT) -> Practice:
    repo = GitRepo(g.path)
    return chart_practice(repo, repo.tree(g.sha("develop")), chart, (), ct)


def test_squashed_prs_that_bump_are_counted_per_pr(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    land(g, 1, "1.0.1")
    land(g, 2, "1.0.2")
    land(g, 3)
    land(g, 4, "1.0.3")
    assert practice(g) == Practice(Basis.BUMPS, changes=4, bumped=3)
    assert practice(g).figure("develop") == (
        "3 of 4 recent changes to this chart on develop bumped its version"
    )


def test_a_merged_branch_is_one_change_however_many_commits(tmp_path: Path) -> None:
    # Each PR is a change, then a bump, merged with a merge commit: read commit by commit, no
    # commit that changed content also bumped; read as PRs (first parent), every one did.
    g = chart_repo(tmp_path / "r")
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, "1.0.3")):
        land(g, number, version, merge=True)
    assert practice(g) == Practice(Basis.BUMPS, changes=3, bumped=3)


def test_release_commits_move_the_version_and_are_no_change(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    for number in (1, 2, 3):
        land(g, number)
    release(g, "1.1.0")
    land(g, 4)
    release(g, "1.2.0")
    found = practice(g)
    assert found == Practice(Basis.RELEASES, changes=4, bumped=0)
    assert not found.enforced
    assert found.reason("develop") == (
        "Not enforced: only 0 of 4 recent changes to this chart on develop bumped its version, "
        "so this repository moves the version at release rather than in each PR."
    )


def test_half_is_enough_and_less_is_not(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    land(g, 1, "1.0.1")
    land(g, 2)
    land(g, 3)
    assert practice(g).basis is Basis.RELEASES  # 1 of 3
    land(g, 4, "1.0.2")
    assert practice(g) == Practice(Basis.BUMPS, changes=4, bumped=2)


def test_a_version_that_never_moved_is_a_placeholder(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r", version="0.0.0")
    for number in (1, 2, 3):
        land(g, number)
    found = practice(g)
    assert found == Practice(Basis.PLACEHOLDER, changes=3, bumped=0, version="0.0.0")
    assert "the version is a placeholder, 0.0.0 through the last 3 changes" in found.reason(
        "develop"
    )


def test_too_few_changes_keep_the_default_and_the_chart_s_creation_is_none(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    land(g, 1, "1.0.1")
    land(g, 2)
    assert practice(g) == Practice(Basis.TOO_FEW, changes=MIN_EVIDENCE - 1, bumped=1)
    assert practice(g).enforced


def test_too_few_changes_that_all_went_without_a_bump_are_not_the_default(tmp_path: Path) -> None:
    """Found on kedacore/charts: a new chart's two changes since it was added kept 0.1.0, as the
    repository moves versions at release; an open PR without a bump was failed by the default."""
    g = chart_repo(tmp_path / "r", version="0.1.0")
    land(g, 1)
    land(g, 2)
    found = practice(g)
    assert found == Practice(Basis.RELEASES, changes=2, bumped=0)
    assert not found.enforced
    assert found.reason("develop") == (
        "Not enforced: only 0 of 2 recent changes to this chart on develop bumped its version, so "
        "this repository moves the version at release rather than in each PR."
    )


def test_changes_that_are_not_content_and_other_charts_do_not_count(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    g.write("other/Chart.yaml", "apiVersion: v2\nname: other\nversion: 1.0.0\n").commit("other")
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, "1.0.3")):
        land(g, number, version)
        touch_ci(g, 10 + number)
        land(g, 20 + number, chart="other")
    assert practice(g) == Practice(Basis.BUMPS, changes=3, bumped=3)
    # The other chart's three changes, in the same history, bumped nothing: each chart its own.
    assert practice(g, "other") == Practice(Basis.RELEASES, changes=3, bumped=0)


def test_ct_yaml_switching_the_check_off_needs_no_history(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    ct = CtConfig(source=".github/ct.yaml", check_version_increment=False)
    found = practice(g, ct=ct)
    assert found == Practice(Basis.CT_OFF, source=".github/ct.yaml")
    assert found.reason("develop") == (
        "Not enforced: `.github/ct.yaml` sets `check-version-increment: false`."
    )


class TreesOnly:
    """A git view that can read trees but list no first-parent history (not a local repository)."""

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


def test_a_view_without_history_keeps_the_default_rule(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    for number in (1, 2, 3):
        land(g, number)
    repo = GitRepo(g.path)
    found = chart_practice(TreesOnly(repo), repo.tree(g.sha()), "client", (), NO_CT)
    assert found == Practice(Basis.NO_HISTORY) and found.enforced


def test_many_charts_at_one_tip_share_one_log_and_learn_what_each_alone_does(
    tmp_path: Path,
) -> None:
    # The first charts read their own directory's history, the next ones the whole tree's log.
    charts = [f"charts/c{n}" for n in range(5)]
    g = chart_repo(tmp_path / "r", chart=charts[0])
    for n, chart in enumerate(charts[1:], 1):
        write_chart(g, chart, f"c{n}", "1.0.0").commit(f"{chart} 1.0.0")
    bumps = {0: "yyyy", 1: "nnnn", 2: "y", 3: "yyny", 4: "ynnn"}  # each chart's PRs, in turn
    number = 0
    for turn in range(4):
        for n, pattern in bumps.items():
            if turn < len(pattern):
                number += 1
                bump = f"1.0.{number}" if pattern[turn] == "y" else None
                land(g, number, bump, chart=charts[n])
    alone = {}
    for chart in charts:
        clear_all()
        alone[chart] = practice(g, chart)
    clear_all()
    together = {chart: practice(g, chart) for chart in charts}
    assert together == alone
    assert len({p.basis for p in alone.values()}) > 1  # the charts do differ
