"""The `version` check learns the repository's practice before it demands a bump (issue 14): the
severity of a missing bump, of a version develop took and of a race follows what the integration
branch's history and its ct.yaml say."""

from __future__ import annotations

from pathlib import Path

from bot.engine.context import OpenPR
from bot.engine.report import Finding, Severity
from bot.git.repo import GitRepo
from checks.version import run
from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import chart_yaml, context_for
from tests.versions.histories import chart_repo, land, release

NEW_TEMPLATE = ("client/templates/service.yaml", "kind: Service\n")


def pr_without_bump(g: GitBuilder, branch: str = "pr") -> GitBuilder:
    g.checkout("develop").branch(branch).write(*NEW_TEMPLATE).commit("client: add a Service")
    return g.checkout("develop")


def review(g: GitBuilder, branch: str = "pr", others: tuple[str, ...] = ()) -> list[Finding]:
    prs = [OpenPR(n + 2, g.sha(b), b) for n, b in enumerate(others)]
    pr = OpenPR(1, g.sha(branch), branch)
    return run(context_for(GitRepo(g.path), pr, [pr, *prs]))


def only(findings: list[Finding], rule: str) -> Finding:
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, findings
    return matching[0]


def bumping_repo(root: Path) -> GitBuilder:
    """Four of five PRs on develop bumped the chart."""
    g = chart_repo(root)
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, None), (4, "1.0.3"), (5, "1.0.4")):
        land(g, number, version)
    return g


def releasing_repo(root: Path) -> GitBuilder:
    """No PR bumps; release commits move the version."""
    g = chart_repo(root)
    for number in (1, 2, 3):
        land(g, number)
    release(g, "1.1.0")
    land(g, 4)
    land(g, 5)
    return release(g, "1.2.0")


def test_where_prs_bump_a_missing_bump_fails_and_says_how_many(tmp_path: Path) -> None:
    g = pr_without_bump(bumping_repo(tmp_path / "r"))
    [finding] = review(g)
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.FAILURE)
    assert finding.title == "client: chart content changed without a version bump"
    assert finding.message == (
        "This PR changes client/templates/service.yaml but `version` stays 1.0.4. A Helm "
        "repository only publishes new versions, so this content would reach nobody. This "
        "repository bumps per change: 4 of 5 recent changes to this chart on develop bumped its "
        "version. Take 1.0.5."
    )
    assert finding.data["practice"] == {
        "basis": "bumps-per-change",
        "enforced": True,
        "changes": 5,
        "bumped": 4,
    }


def test_where_release_commits_move_the_version_it_is_a_notice(tmp_path: Path) -> None:
    g = pr_without_bump(releasing_repo(tmp_path / "r"))
    [finding] = review(g)
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert finding.title.endswith("without a version bump (not enforced here)")
    assert finding.message == (
        "This PR changes client/templates/service.yaml but `version` stays 1.2.0. Not enforced: "
        "only 0 of 5 recent changes to this chart on develop bumped its version, so this "
        "repository moves the version at release rather than in each PR. If this change is to be "
        "released on its own, take 1.2.1."
    )
    assert finding.data["practice"]["basis"] == "bumps-at-release"


def test_merge_commit_prs_that_bump_on_their_branch_count_as_bumping(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    for number, version in ((1, "1.0.1"), (2, "1.0.2"), (3, "1.0.3")):
        land(g, number, version, merge=True)
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.FAILURE
    assert "3 of 3 recent changes to this chart on develop bumped its version" in finding.message


def test_a_placeholder_version_is_a_notice(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r", version="0.1.0")
    for number in (1, 2, 3, 4):
        land(g, number)
    [finding] = review(pr_without_bump(g))
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert (
        "Not enforced: the version is a placeholder, 0.1.0 through the last 4 changes to this "
        "chart on develop, stamped at release."
    ) in finding.message
    assert finding.data["practice"]["basis"] == "placeholder-version"


def test_ct_yaml_check_version_increment_false_is_a_notice(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.write(".github/ct.yaml", "target-branch: develop\ncheck-version-increment: false\n")
    g.commit("ct: no version check")
    [finding] = review(pr_without_bump(g))
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert "Not enforced: `.github/ct.yaml` sets `check-version-increment: false`." in (
        finding.message
    )


def test_a_version_develop_took_is_a_notice_where_releases_set_versions(tmp_path: Path) -> None:
    # The PR branched before the 1.2.0 release and bumped to 1.1.1 itself; the release picks the
    # next version, whatever the PR wrote, so this is for the release to settle.
    g = releasing_repo(tmp_path / "r")
    base = g.sha("develop~1")
    g.branch("pr", base).write(*NEW_TEMPLATE)
    g.write("client/Chart.yaml", chart_yaml("1.1.1")).commit("add a Service, 1.1.1")
    taken = only(review(g.checkout("develop")), "taken-by-develop")
    assert taken.severity is Severity.NOTICE
    assert "only 0 of 5 recent changes to this chart on develop bumped its version" in (
        taken.message
    )
    assert taken.message.endswith("Take 1.2.1.")


def test_a_version_develop_took_still_fails_where_prs_bump(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.branch("pr", "develop~1").write(*NEW_TEMPLATE)
    g.write("client/Chart.yaml", chart_yaml("1.0.4")).commit("add a Service, 1.0.4")
    taken = only(review(g.checkout("develop")), "taken-by-develop")
    assert taken.severity is Severity.FAILURE
    assert "This repository bumps per change: 4 of 5" in taken.message


def test_a_race_is_a_notice_where_releases_set_versions(tmp_path: Path) -> None:
    g = releasing_repo(tmp_path / "r")
    for branch, replicas in (("pr", "7"), ("other", "8")):
        g.checkout("develop").branch(branch).write("client/values.yaml", f"replicas: {replicas}\n")
        g.write("client/Chart.yaml", chart_yaml("1.2.1")).commit(f"{branch}: 1.2.1")
    race = only(review(g.checkout("develop"), others=("other",)), "race")
    assert race.severity is Severity.NOTICE
    assert race.message.startswith("#2 also bumps this chart to 1.2.1;")
    assert "Not enforced: only 0 of 5" in race.message


def test_a_suggestion_never_goes_below_what_the_head_meant(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r", version="0.45.28")
    # Helm reads 0.46.00 as 0.46.0 (its lint warns, which is the lint check's to say): a bump.
    g.branch("pr").write(*NEW_TEMPLATE).write("client/Chart.yaml", chart_yaml("0.46.00"))
    g.commit("add a Service, 0.46.00")
    assert review(g.checkout("develop")) == []
    # Helm refuses a capital V; what the head meant is still 0.46.0.
    g.checkout("pr").write("client/Chart.yaml", chart_yaml("V0.46.0")).commit("V0.46.0")
    invalid = only(review(g.checkout("develop")), "invalid-version")
    assert invalid.severity is Severity.FAILURE
    assert invalid.data["suggested"] == "0.46.0"
    assert invalid.message.endswith("Take 0.46.0.")
    # develop has meanwhile released 0.46.0: the next minor, still never back to 0.45.x
    g.write("client/Chart.yaml", chart_yaml("0.46.0")).commit("chore(release): publish 0.46.0")
    assert only(review(g), "invalid-version").data["suggested"] == "0.47.0"
