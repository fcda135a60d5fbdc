"""bot/versions/practice.py: what the integration branch's history says about bumping, walked
change by change on real repositories."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from bot.git.objects import Commit, Tree
from bot.git.repo import GitRepo
from bot.versions.practice import MARGIN, UNANIMOUS, learned_rule
from bot.versions.rule import HOW_TO_DECLARE, Basis, BumpRule, Level
from tests.support.gitbuilder import GitBuilder
from tests.support.memos import ColdMemos
from tests.support.version_scenario import chart_yaml, write_chart
from tests.versions.histories import chart_repo, land, release, touch_ci


def learned(
    g: GitBuilder, chart: str = "client", released: bool = True, tip: str = "develop"
) -> BumpRule:
    repo = GitRepo(g.path)
    return learned_rule(repo, repo.tree(g.sha(tip)), chart, (), released, "develop")


def counts(rule: BumpRule) -> tuple[Level, Basis, int, int, int]:
    return rule.level, rule.basis, rule.changes, rule.bumped, rule.releases


def land_all(g: GitBuilder, pattern: str, start: int = 1, chart: str = "client") -> GitBuilder:
    """One squashed PR per letter: `y` bumps the patch version, `n` does not."""
    for offset, letter in enumerate(pattern):
        number = start + offset
        land(g, number, f"1.0.{number}" if letter == "y" else None, chart=chart)
    return g


def test_prs_that_bump_lean_per_change_without_enforcing(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r"), "yyny")
    rule = learned(g)
    assert counts(rule) == (Level.EXPECTED, Basis.BUMPS, 4, 3, 0)
    assert rule.said == (
        "This repository leans to bumping per change: 3 of 4 recent content changes to this "
        "chart on develop bumped its version."
    )
    assert rule.sentence() == f"{rule.said} {HOW_TO_DECLARE}"


def test_every_one_of_ten_bumped_and_none_at_release_is_enforced(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r"), "y" * UNANIMOUS)
    rule = learned(g)
    assert counts(rule) == (Level.ENFORCED, Basis.BUMPS, UNANIMOUS, UNANIMOUS, 0)
    assert rule.said == (
        "This repository bumps per change: 10 of 10 recent content changes to this chart on "
        "develop bumped its version, none at release."
    )
    # Nine are not enough to bet a reviewer's afternoon on.
    assert learned(g, tip="develop~1").level is Level.EXPECTED


def test_a_merged_branch_is_one_change_however_many_commits(tmp_path: Path) -> None:
    # Each PR is a change, then a bump, merged with a merge commit: read commit by commit, no
    # commit that changed content also bumped; read as PRs (first parent), every one did.
    g = chart_repo(tmp_path / "r")
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, "1.0.3")):
        land(g, number, version, merge=True)
    assert counts(learned(g)) == (Level.EXPECTED, Basis.BUMPS, 3, 3, 0)


def test_release_commits_move_the_version_and_are_no_vote(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r"), "nnn")
    release(g, "1.1.0")
    land(g, 4)
    release(g, "1.2.0")
    rule = learned(g)
    assert counts(rule) == (Level.NOT_ENFORCED, Basis.RELEASES, 4, 0, 2)
    assert rule.said == (
        "Not enforced: 0 of 4 recent content changes to this chart on develop bumped its "
        "version, and 2 release commits moved it, so this repository moves the version at "
        "release rather than in each PR."
    )


def release_with_content(g: GitBuilder, version: str, number: int) -> GitBuilder:
    """A release commit that also moves the image the release ships: content, but a release."""
    g.checkout("develop").write("client/Chart.yaml", chart_yaml(version))
    g.write("client/values.yaml", f"image: app:{version}\nreplicas: {number}\n")
    return g.commit(f"chore: client chart {version} release (#{number})")


def test_release_commits_alternating_with_prs_are_not_bumps_by_prs(tmp_path: Path) -> None:
    """Found on a real repository (issue 38, rule 2): content PRs alternate with release commits
    that bump and move the image; counted as changes, half of all changes bumped and the check
    enforced at 10-12 of 20 and let go at 9 of 20 on the next PR. A release commit, recognised by
    its subject, is evidence of bumping at release, never a PR's bump."""
    g = chart_repo(tmp_path / "r")
    for n in range(1, 21, 2):
        land(g, n)
        release_with_content(g, f"1.{n}.0", n + 1)
    assert counts(learned(g)) == (Level.NOT_ENFORCED, Basis.RELEASES, 10, 0, 10)


def test_the_verdict_moves_one_level_at_most_and_only_past_the_margin(tmp_path: Path) -> None:
    """Issue 38's done-when: between consecutive changes the verdict moves at most one step, and
    only when the counted evidence crosses its threshold by MARGIN changes. A history alternating
    around half (bump, no bump, ...) keeps one verdict throughout; a run of one kind moves it one
    level, past the margin, then (with UNANIMOUS in a row) to enforced."""
    g = chart_repo(tmp_path / "r")
    pattern = "yn" * 8 + "n" * 6 + "y" * 24
    levels = []
    for i, letter in enumerate(pattern, 1):
        land(g, i, f"1.0.{i}" if letter == "y" else None)
        levels.append(learned(g).level)
    steps = [abs(a - b) for a, b in zip(levels, levels[1:], strict=False)]
    assert max(steps) == 1
    assert set(levels[:16]) == {Level.EXPECTED}  # alternating: never flips
    first_notice = levels.index(Level.NOT_ENFORCED)
    assert first_notice == 16 + MARGIN - 1  # the second "n" past even
    assert levels[-1] is Level.ENFORCED
    changes = sum(1 for a, b in zip(levels, levels[1:], strict=False) if a != b)
    assert changes == 3  # down once, up to expected, up to enforced


def test_a_version_that_never_moved_is_a_placeholder(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r", version="0.0.0"), "nnn")
    rule = learned(g)
    assert (rule.level, rule.basis) == (Level.NOT_ENFORCED, Basis.PLACEHOLDER)
    assert "the version is a placeholder, 0.0.0 through the last 3 changes" in rule.said


def test_too_few_changes_to_a_released_chart_keep_the_default(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r"), "yn")
    rule = learned(g, released=True)
    assert counts(rule) == (Level.EXPECTED, Basis.TOO_FEW, 2, 1, 0)
    assert rule.said == (
        "develop has only 2 earlier changes to this chart to learn the repository's practice "
        "from, so a bump is expected, as by default."
    )


def test_a_chart_never_released_with_no_history_has_no_practice(tmp_path: Path) -> None:
    """Issue 38, rule 4: a test fixture chart at a placeholder 0.1.0, no releases, no ct.yaml,
    no earlier change: it was failed by the default; there is nothing to learn."""
    g = chart_repo(tmp_path / "r", version="0.1.0")
    rule = learned(g, released=False)
    assert (rule.level, rule.basis) == (Level.NOT_ENFORCED, Basis.NEVER_RELEASED)
    assert rule.said == (
        "Not enforced: no release of this chart is on record and develop has only 0 earlier "
        "changes to it, so there is no practice to learn."
    )
    assert learned(land_all(g, "n"), released=False).basis is Basis.NEVER_RELEASED


def test_a_few_changes_that_all_went_without_a_bump_lean_to_release(tmp_path: Path) -> None:
    """Found on kedacore/charts: a new chart's two changes since it was added kept 0.1.0."""
    g = land_all(chart_repo(tmp_path / "r", version="0.1.0"), "nn")
    assert counts(learned(g)) == (Level.NOT_ENFORCED, Basis.RELEASES, 2, 0, 0)


def test_changes_that_are_not_content_and_other_charts_do_not_count(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    g.write("other/Chart.yaml", "apiVersion: v2\nname: other\nversion: 1.0.0\n").commit("other")
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, "1.0.3")):
        land(g, number, version)
        touch_ci(g, 10 + number)
        land(g, 20 + number, chart="other")
    assert counts(learned(g)) == (Level.EXPECTED, Basis.BUMPS, 3, 3, 0)
    # The other chart's three changes, in the same history, bumped nothing: each chart its own.
    assert counts(learned(g, "other")) == (Level.NOT_ENFORCED, Basis.RELEASES, 3, 0, 0)


def test_a_shallow_clone_says_its_history_is_cut_short(tmp_path: Path) -> None:
    """Issue 38, rule 7: a shallow clone holds a few commits of a history of twenty bumps; what
    it lacks is missing, not absent, and nothing is learned from the rest."""
    g = land_all(chart_repo(tmp_path / "r"), "y" * 20)
    clone = tmp_path / "shallow"
    g.run_git("clone", "-q", "--depth", "3", "--branch", "develop", f"file://{g.path}", str(clone))
    repo = GitRepo(clone)
    tip = repo.resolve("origin/develop")
    assert tip is not None and repo.shallow_commits()
    rule = learned_rule(repo, repo.tree(tip), "client", (), True, "develop")
    assert (rule.level, rule.basis) == (Level.EXPECTED, Basis.HISTORY_CUT)
    assert "is cut short (a shallow clone: `git fetch --unshallow`" in rule.said
    assert learned(g).level is Level.ENFORCED  # the whole history does tell


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

    def merge_changes(self, ours: str, theirs: str, path: str) -> bool:
        return self.repo.merge_changes(ours, theirs, path)

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


def test_a_view_without_history_expects_a_bump_as_by_default(tmp_path: Path) -> None:
    g = land_all(chart_repo(tmp_path / "r"), "nnn")
    repo = GitRepo(g.path)
    rule = learned_rule(TreesOnly(repo), repo.tree(g.sha()), "client", (), True, "develop")
    assert (rule.level, rule.basis) == (Level.EXPECTED, Basis.NO_HISTORY)


def test_many_charts_at_one_tip_share_one_log_and_learn_what_each_alone_does(
    tmp_path: Path,
    cold_memos: ColdMemos,
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
        cold_memos()
        alone[chart] = learned(g, chart)
    cold_memos()
    together = {chart: learned(g, chart) for chart in charts}
    assert together == alone
    assert len({p.level for p in alone.values()}) > 1  # the charts do differ
