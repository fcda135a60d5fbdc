"""Which PRs are open, on the command line: bot/cli/open_prs.py on real git repositories."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from unittest import mock

import pytest

from bot.cli import links
from bot.cli.main import main
from bot.cli.open_prs import DEFAULT_DISCOVERY, Discovery, discover_open_prs, head_number
from bot.git.repo import GitRepo
from bot.model.context import OpenPR
from tests.cli.test_cli import cli
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated

DAY = 86400
OLD = 200  # days: past the default max age of 60


def commit(g: GitBuilder, message: str, days_ago: int = 0) -> GitBuilder:
    """`g.commit(message)`, authored and committed `days_ago` days ago."""
    date = f"@{int(time.time()) - days_ago * DAY} +0000"
    with mock.patch.dict(os.environ, {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}):
        return g.commit(message)


def pr_branch(g: GitBuilder, name: str, text: str, days_ago: int = 0) -> GitBuilder:
    """A branch off develop that changes the chart's values, then back on develop."""
    g.branch(name, "develop").write("app/values.yaml", text)
    return commit(g, f"{name}: values", days_ago).checkout("develop")


def merge_ref(g: GitBuilder, number: int) -> GitBuilder:
    """What GitHub keeps while PR `number` is open and mergeable: `refs/pull/N/merge`, a merge of
    its head into develop."""
    head = g.sha(f"refs/pull/{number}/head")
    tree = g.run_git("rev-parse", f"{head}^{{tree}}")
    merge = g.run_git("commit-tree", tree, "-p", g.sha("develop"), "-p", head, "-m", "Merge")
    g.run_git("update-ref", f"refs/pull/{number}/merge", merge)
    return g


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    return commit(g, "app 1.0.0", days_ago=OLD + 100)


def discovered(g: GitBuilder, rules: Discovery = DEFAULT_DISCOVERY) -> list[tuple[int, str]]:
    found = discover_open_prs(GitRepo(g.path), g.sha("develop"), None, None, rules=rules)
    return [(pr.number, pr.ref) for pr in found]


# -- refs/pull/N/head ----------------------------------------------------------------------------


def test_a_squash_merged_pr_is_not_open(g: GitBuilder) -> None:
    pr_branch(g, "squashed", "replicas: 2\n").pull_ref(1, "squashed")
    pr_branch(g, "open", "replicas: 3\n").pull_ref(2, "open")
    g.write("app/values.yaml", "replicas: 2\n")
    commit(g, "app: two replicas (#1)")  # GitHub's squash: its head is no ancestor of develop
    assert discovered(g) == [(2, "")]


def test_a_merged_prs_stale_merge_ref_does_not_reopen_it(g: GitBuilder) -> None:
    # A mirror fetched without pruning keeps the merge ref of a PR merged since.
    pr_branch(g, "squashed", "replicas: 2\n").pull_ref(1, "squashed")
    merge_ref(g, 1).write("app/values.yaml", "replicas: 2\n")
    commit(g, "app: two replicas (#1)")
    pr_branch(g, "merged", "replicas: 3\n").pull_ref(2, "merged")
    merge_ref(g, 2).merge("merged", "Merge branch 'merged'")
    assert discovered(g) == []


def test_a_pr_merged_by_a_merge_commit_is_not_open(g: GitBuilder) -> None:
    pr_branch(g, "merged", "replicas: 2\n").pull_ref(4, "merged")
    g.merge("merged", "Merge branch 'merged' into develop")  # no number: the ancestry tells
    assert discovered(g) == []


def test_an_open_pr_with_a_merge_ref_is_open_however_old(g: GitBuilder) -> None:
    pr_branch(g, "waiting", "replicas: 2\n", days_ago=OLD).pull_ref(5, "waiting")
    merge_ref(g, 5)
    assert discovered(g) == [(5, "")]


def test_an_old_pr_without_merge_ref_is_closed_and_a_recent_one_open(g: GitBuilder) -> None:
    # Neither has a merge ref: an open PR with conflicts has none either, so only age tells.
    pr_branch(g, "abandoned", "replicas: 2\n", days_ago=OLD).pull_ref(6, "abandoned")
    pr_branch(g, "conflicted", "replicas: 3\n", days_ago=10).pull_ref(7, "conflicted")
    assert discovered(g) == [(7, "")]
    assert discovered(g, rules=Discovery(max_age_days=OLD + 1)) == [(6, ""), (7, "")]
    # Ages are measured from the newest commit read, not the clock: #7's is the newest here.
    assert discovered(g, rules=Discovery(max_age_days=5)) == [(7, "")]
    commit(g.write("README.md", "moved on\n"), "develop moves on")
    assert discovered(g, rules=Discovery(max_age_days=5)) == []


def test_the_history_walk_is_asked_only_of_prs_the_cheaper_rules_leave_open(
    g: GitBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A mirror's heads are mostly squash-merged or long closed: walking history for all of them
    # cost most of a review. Its answer then serves the claims, which ask for the same heads.
    for n in range(1, 6):
        pr_branch(g, f"squashed-{n}", f"replicas: {n}\n").pull_ref(n, f"squashed-{n}")
        commit(g.write("app/values.yaml", f"replicas: {n}\n"), f"app: {n} replicas (#{n})")
    pr_branch(g, "abandoned", "replicas: 9\n", days_ago=OLD).pull_ref(6, "abandoned")
    pr_branch(g, "merged", "replicas: 7\n").pull_ref(7, "merged")
    g.merge("merged", "Merge branch 'merged' into develop")
    pr_branch(g, "open", "replicas: 8\n").pull_ref(8, "open")
    asked: list[list[str]] = []
    real = GitRepo.commits_outside

    def counted(self: GitRepo, heads: list[str], outside: str) -> object:
        asked.append(sorted(heads))
        return real(self, heads, outside)

    monkeypatch.setattr(GitRepo, "commits_outside", counted)
    repo = GitRepo(g.path)
    found = discover_open_prs(repo, g.sha("develop"), None, None)
    assert [pr.number for pr in found] == [8]
    assert asked == [sorted([g.sha("refs/pull/7/head"), g.sha("refs/pull/8/head")])]
    points = repo.fork_points(g.sha("develop"), [g.sha("refs/pull/8/head")])
    assert points[g.sha("refs/pull/8/head")].merge_base is not None
    assert len(asked) == 1  # remembered


def test_no_open_prs_discovers_nothing_but_explicit_ones_count(g: GitBuilder) -> None:
    pr_branch(g, "open", "replicas: 2\n").pull_ref(8, "open")
    merge_ref(g, 8)
    assert discovered(g, rules=Discovery(enabled=False)) == []
    found = discover_open_prs(
        GitRepo(g.path), g.sha("develop"), ["9=open"], None, rules=Discovery(enabled=False)
    )
    assert found == (OpenPR(9, g.sha("open"), "open"),)


def test_explicit_prs_are_not_filtered_but_the_pr_under_review_is_left_out(g: GitBuilder) -> None:
    pr_branch(g, "old", "replicas: 2\n", days_ago=OLD)
    pr_branch(g, "mine", "replicas: 3\n")
    repo = GitRepo(g.path)
    explicit = ["3=old", "4=mine", "5=old"]
    found = discover_open_prs(repo, g.sha("develop"), explicit, exclude_head=None, exclude_number=5)
    assert [pr.number for pr in found] == [3, 4]  # an old head still counts when named
    found = discover_open_prs(repo, g.sha("develop"), explicit, exclude_head=g.sha("mine"))
    assert [pr.number for pr in found] == [3, 5]


def test_the_number_of_the_head_under_review() -> None:
    assert head_number("refs/pull/12/head") == head_number("pull/12/head") == 12
    assert head_number("refs/pull/12/merge") is None
    assert head_number("feature-12") is None


def test_a_linked_repository_follows_the_same_rules(g: GitBuilder) -> None:
    pr_branch(g, "abandoned", "replicas: 2\n", days_ago=OLD).pull_ref(1, "abandoned")
    pr_branch(g, "squashed", "replicas: 3\n").pull_ref(2, "squashed")
    pr_branch(g, "open", "replicas: 4\n").pull_ref(3, "open")
    pr_branch(g, "branch-only", "replicas: 5\n")  # no refs/pull: a linked repository reads none
    g.write("app/values.yaml", "replicas: 3\n")
    commit(g, "app: three (#2)")
    repo = GitRepo(g.path)
    assert links.open_prs(repo, g.sha("develop")) == (OpenPR(3, g.sha("open")),)


def test_a_stale_merge_ref_says_nothing_and_ages_follow_the_repository(g: GitBuilder) -> None:
    """Issue 38: a mirror fetched without pruning keeps merge refs of PRs merged in 2016. A merge
    ref counts only while fresh; and ages are measured from the repository's newest commit, so a
    snapshot of it reads the same next month."""
    pr_branch(g, "old", "replicas: 2\n", days_ago=OLD).pull_ref(1, "old")
    date = f"@{int(time.time()) - OLD * DAY} +0000"
    with mock.patch.dict(os.environ, {"GIT_COMMITTER_DATE": date}):
        merge_ref(g, 1)
    pr_branch(g, "open", "replicas: 3\n", days_ago=1).pull_ref(2, "open")
    merge_ref(g, 2)
    assert discovered(g) == [(2, "")]
    a_year_on = Discovery(now=time.time() + 365 * DAY)
    assert discovered(g, rules=a_year_on) == []  # the clock, given, does move them
    assert discovered(g) == [(2, "")]  # the repository's own clock does not


def test_a_pr_into_another_branch_is_left_out(g: GitBuilder) -> None:
    """A backport: its merge ref's first parent is on the release branch, not on develop."""
    g.branch("release-1.x", "develop").write("README.md", "release\n")
    commit(g, "release moves").checkout("develop")
    g.branch("backport", "release-1.x").write("app/values.yaml", "replicas: 4\n")
    commit(g, "backport").checkout("develop").pull_ref(3, "backport")
    head = g.sha("refs/pull/3/head")
    tree = g.run_git("rev-parse", f"{head}^{{tree}}")
    merge = g.run_git("commit-tree", tree, "-p", g.sha("release-1.x"), "-p", head, "-m", "Merge")
    g.run_git("update-ref", "refs/pull/3/merge", merge)
    pr_branch(g, "into-develop", "replicas: 5\n").pull_ref(4, "into-develop")
    merge_ref(g, 4)
    assert discovered(g) == [(4, "")]


def test_a_linked_repository_s_open_prs_follow_the_review_s_max_age(g: GitBuilder) -> None:
    """Issue 38: `--open-pr-max-age` applies to linked repositories' open PRs too."""
    pr_branch(g, "abandoned", "replicas: 2\n", days_ago=OLD).pull_ref(1, "abandoned")
    pr_branch(g, "open", "replicas: 4\n").pull_ref(3, "open")
    link = {"acme/docs": (str(g.path), None)}
    default = links.local_resolver(link)("acme/docs")
    assert [pr.number for pr in default.open_prs] == [3]
    older = links.local_resolver(link, Discovery(max_age_days=OLD + 1))("acme/docs")
    assert [pr.number for pr in older.open_prs] == [1, 3]
    assert links.local_resolver(link, Discovery(enabled=False))("acme/docs").open_prs == ()


# -- branches, without refs/pull -------------------------------------------------------------------


def pushed(g: GitBuilder, *names: str) -> GitBuilder:
    """Each branch as a remote-tracking branch too, which the local one tracks."""
    if "origin" not in g.run_git("remote").split():
        g.run_git("remote", "add", "origin", "https://github.com/acme/charts.git")
    for name in names:
        g.run_git("update-ref", f"refs/remotes/origin/{name}", g.sha(name))
        g.run_git("config", f"branch.{name}.remote", "origin")
        g.run_git("config", f"branch.{name}.merge", f"refs/heads/{name}")
    return g


def test_a_local_branch_pushed_nowhere_is_no_pr(g: GitBuilder) -> None:
    """Issue 38: the command line counted a maintainer's local experiment branches as open PRs.
    Only remote-tracking branches, and local branches tracking one, are."""
    pr_branch(g, "experiment", "replicas: 2\n")
    pr_branch(g, "feature", "replicas: 3\n")
    pr_branch(g, "off-develop", "replicas: 4\n")
    pushed(g, "feature")
    g.run_git("config", "branch.off-develop.remote", "origin")
    g.run_git("config", "branch.off-develop.merge", "refs/heads/develop")
    g.run_git("update-ref", "refs/remotes/origin/develop", g.sha("develop"))
    assert discovered(g) == [(0, "feature")]


def test_branches_must_be_unmerged_recent_and_touch_a_chart(g: GitBuilder) -> None:
    pr_branch(g, "feature", "replicas: 2\n")
    pr_branch(g, "stale", "replicas: 3\n", days_ago=OLD)
    g.branch("docs", "develop").write("docs/index.md", "# docs\n")
    commit(g, "docs only").checkout("develop")
    pr_branch(g, "gh-pages", "replicas: 4\n")  # a chart change, a recent head, but a site branch
    pr_branch(g, "merged", "replicas: 5\n").merge("merged")
    pushed(g, "feature", "stale", "docs", "gh-pages", "merged")
    assert discovered(g) == [(0, "feature")]


def test_a_new_chart_on_a_branch_touches_a_chart(g: GitBuilder) -> None:
    g.branch("new-chart", "develop")
    for path, text in chart_files("web", "web").items():
        g.write(path, text)
    commit(g, "web 1.0.0").checkout("develop")
    assert discovered(pushed(g, "new-chart")) == [(0, "new-chart")]


def test_the_integration_branch_is_never_a_pr_under_any_name(g: GitBuilder) -> None:
    g.branch("integration", "develop").checkout("develop")
    pr_branch(g, "ahead", "replicas: 2\n")
    # origin/integration is ahead of the local integration branch that develop_sha names.
    g.run_git("update-ref", "refs/remotes/origin/integration", g.sha("ahead"))
    g.run_git("update-ref", "refs/remotes/origin/main", g.sha("ahead"))
    g.run_git("branch", "-D", "ahead")
    assert discovered(g) == []


# -- through the command line -----------------------------------------------------------------------


@pytest.fixture
def race(g: GitBuilder) -> GitBuilder:
    """#7 and #8 both bump app to 1.0.1; #5, closed long ago, did too; #6 did, and was squashed."""
    bump = chart_files(version="1.0.1")["app/Chart.yaml"]
    for number, days_ago in ((5, OLD), (6, 0), (7, 0), (8, 0)):
        g.branch(f"pr-{number}", "develop").write("app/Chart.yaml", bump)
        g.write("app/values.yaml", f"# {number}\n" + chart_files()["app/values.yaml"])
        commit(g, f"app 1.0.1 #{number}", days_ago).pull_ref(number, f"pr-{number}")
        g.checkout("develop")
    g.write("README.md", "charts\n")  # #6's squash: its subject names it; the bump went elsewhere
    commit(g, "docs: readme (#6)")
    return g


def race_findings(g: GitBuilder, *args: str) -> list[dict]:
    review = ("review", "--repo", str(g.path), "--base", "develop", "--format", "json")
    proc = cli(*review, *args)
    assert proc.returncode == 0, proc.stderr
    return [f for f in validated(proc.stdout)["findings"] if f["rule"] == "race"]


def test_the_race_warning_names_only_other_open_prs(race: GitBuilder) -> None:
    [finding] = race_findings(race, "--head", "refs/pull/8/head")
    assert finding["data"]["other_prs"] == [7]
    assert finding["title"] == "app: version 1.0.1 is also claimed by #7"


def test_the_pr_under_review_named_by_number_is_not_its_own_rival(race: GitBuilder) -> None:
    # An explicit list may hold the PR under review at an older head: its number leaves it out.
    before = race.sha("pr-8")
    race.checkout("pr-8").write("app/templates/NOTES.txt", "pushed again\n")
    commit(race, "app: notes").pull_ref(8, "pr-8").checkout("develop")
    explicit = ("--open-pr", f"8={before}", "--open-pr", "5=pr-5")  # #5 is old, but named
    [finding] = race_findings(race, "--head", "refs/pull/8/head", *explicit)
    assert finding["data"]["other_prs"] == [5]


def test_no_open_prs_on_the_command_line_gives_no_race(race: GitBuilder) -> None:
    assert race_findings(race, "--head", "pr-8", "--no-open-prs") == []
    assert [f["data"]["other_prs"] for f in race_findings(race, "--head", "pr-8")] == [[7]]


def test_an_open_pr_max_age_of_more_days_counts_the_closed_pr(race: GitBuilder) -> None:
    [finding] = race_findings(race, "--head", "pr-8", "--open-pr-max-age", str(OLD + 1))
    assert finding["data"]["other_prs"] == [5, 7]


def test_a_max_age_that_is_no_number_of_days_is_a_usage_error(race: GitBuilder) -> None:
    proc = cli(
        "review",
        "--repo",
        str(race.path),
        "--base",
        "develop",
        "--head",
        "pr-8",
        "--open-pr-max-age",
        "-3",
    )
    assert proc.returncode == 2
    assert "--open-pr-max-age: expected a whole number of days, got '-3'" in proc.stderr


def test_the_board_discovers_by_the_same_rules_and_flags(
    race: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    def board(*flags: str) -> list[int]:
        assert main(["versions", "--repo", str(race.path), "--format", "json", *flags]) == 0
        charts = json.loads(capsys.readouterr().out)["charts"]  # those the open PRs touch
        return [row["pr"] for chart in charts for row in chart["rows"]]

    assert sorted(board()) == [7, 8]
    assert sorted(board("--open-pr-max-age", str(OLD + 1))) == [5, 7, 8]
    assert board("--no-open-prs") == []
