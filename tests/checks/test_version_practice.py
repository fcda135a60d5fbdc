"""The `version` check reads what the repository declares, then what it has released, and only then
what its history shows, before it demands a bump (issues 14 and 38): the severity of a missing
bump, of a version develop took and of a race follows that rule, and every finding says what it
read and how to declare it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bot.git.repo import GitRepo
from bot.model.config import Config
from bot.model.context import OpenPR
from bot.model.report import Finding, Severity
from bot.versions.options import VersionConfig
from bot.versions.rule import HOW_TO_DECLARE
from checks.version import run
from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import chart_yaml, context_for, write_chart
from tests.versions.histories import chart_repo, land, release

NEW_TEMPLATE = ("client/templates/service.yaml", "kind: Service\n")


def pr_without_bump(g: GitBuilder, branch: str = "pr", chart: str = "client") -> GitBuilder:
    g.checkout("develop").branch(branch)
    g.write(f"{chart}/templates/service.yaml", "kind: Service\n").commit(f"{chart}: add a Service")
    return g.checkout("develop")


def review(
    g: GitBuilder,
    branch: str = "pr",
    others: tuple[str, ...] = (),
    config: Config | None = None,
    chart: str = "client",
) -> list[Finding]:
    prs = [OpenPR(n + 2, g.sha(b), b) for n, b in enumerate(others)]
    pr = OpenPR(1, g.sha(branch), branch)
    return run(context_for(GitRepo(g.path), pr, [pr, *prs], config, chart))


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


def lint_workflow(*runs: str) -> str:
    steps = "".join(f"      - run: {r}\n" for r in runs)
    return (
        "name: lint\non:\n  pull_request:\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n{steps}"
    )


# -- what the history shows, where nothing is declared --------------------------------------------


def test_where_prs_mostly_bump_a_missing_bump_is_a_warning_that_says_how_to_declare(
    tmp_path: Path,
) -> None:
    g = pr_without_bump(bumping_repo(tmp_path / "r"))
    [finding] = review(g)
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.WARNING)
    assert finding.title == "client: chart content changed without a version bump"
    assert finding.message == (
        "This PR changes client/templates/service.yaml but `version` stays 1.0.4. A Helm "
        "repository only publishes new versions, so this content would wait for the next bump. "
        "This repository leans to bumping per change: 4 of 5 recent content changes to this "
        f"chart on develop bumped its version. {HOW_TO_DECLARE} Take 1.0.5."
    )
    assert finding.data["practice"] == {
        "basis": "bumps-per-change",
        "enforced": False,
        "level": "warning",
        "declared": False,
        "source": None,
        "changes": 5,
        "bumped": 4,
        "releases": 0,
    }


def test_where_every_one_of_many_prs_bumped_a_missing_bump_fails(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    for number in range(1, 11):
        land(g, number, f"1.0.{number}")
    [finding] = review(pr_without_bump(g))
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.FAILURE)
    assert "This repository bumps per change: 10 of 10 recent content changes" in finding.message
    assert HOW_TO_DECLARE not in finding.message


def test_where_release_commits_move_the_version_it_is_a_notice(tmp_path: Path) -> None:
    g = pr_without_bump(releasing_repo(tmp_path / "r"))
    [finding] = review(g)
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert finding.title.endswith("without a version bump (not enforced here)")
    assert finding.message == (
        "This PR changes client/templates/service.yaml but `version` stays 1.2.0. Not enforced: "
        "0 of 5 recent content changes to this chart on develop bumped its version, and 2 "
        "release commits moved it, so this repository moves the version at release rather than "
        f"in each PR. {HOW_TO_DECLARE} If this change is to be released on its own, take 1.2.1."
    )
    assert finding.data["practice"]["basis"] == "bumps-at-release"


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


# -- what the repository declares -----------------------------------------------------------------


def test_the_config_declares_per_change_or_at_release_per_chart(tmp_path: Path) -> None:
    g = pr_without_bump(releasing_repo(tmp_path / "r"))
    config = Config(
        checks={"version": VersionConfig(bump={"client": "per-change", "*": "at-release"})}
    )
    [finding] = review(g, config=config)
    assert finding.severity is Severity.FAILURE
    assert "`.github/chart-review.yml` declares `version.bump: per-change`." in finding.message
    [finding] = review(
        pr_without_bump(bumping_repo(tmp_path / "b")),
        config=Config(checks={"version": VersionConfig(bump="at-release")}),
    )
    assert finding.severity is Severity.NOTICE
    assert "declares `version.bump: at-release`" in finding.message
    assert HOW_TO_DECLARE not in finding.message


def test_ct_lint_in_ci_enforces_except_for_the_chart_it_lints_without_the_check(
    tmp_path: Path,
) -> None:
    """Issue 38, rule 5: a repository lints every chart with `ct lint`, but one chart in a step of
    its own with `--check-version-increment=false`: that chart needs no bump, the others do. The
    history (PRs that bumped both) says otherwise for the one; what the CI runs decides."""
    g = GitBuilder(tmp_path / "r")
    write_chart(g, "charts/web", "web", "1.0.0")
    write_chart(g, "charts/legacy", "legacy", "1.0.0")
    g.write(".github/ct.yaml", "target-branch: develop\nexcluded-charts: [legacy]\n")
    g.write(
        ".github/workflows/lint.yaml",
        lint_workflow(
            "ct lint --config .github/ct.yaml",
            "ct lint --charts charts/legacy --check-version-increment=false",
        ),
    ).commit("two charts, linted")
    for number in (1, 2, 3):
        land(g, number, f"1.0.{number}", chart="charts/web")
        land(g, 10 + number, f"1.0.{number}", chart="charts/legacy")
    pr_without_bump(g, "web-pr", "charts/web")
    pr_without_bump(g, "legacy-pr", "charts/legacy")
    [web] = review(g, "web-pr", chart="charts/web")
    assert web.severity is Severity.FAILURE
    assert (
        "CI runs `ct lint` on this chart (.github/workflows/lint.yaml line 9), which fails a PR "
        "whose chart version does not increase (.github/ct.yaml)."
    ) in web.message
    [legacy] = review(g, "legacy-pr", chart="charts/legacy")
    assert legacy.severity is Severity.NOTICE
    assert (
        "Not enforced: CI runs `ct lint` on this chart with --check-version-increment=false "
        "(.github/workflows/lint.yaml line 10)."
    ) in legacy.message
    assert legacy.data["practice"]["basis"] == "ct-check-version-increment-off"


def test_a_ct_yaml_that_ci_runs_switching_the_check_off_is_a_notice(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.write(".github/ct.yaml", "target-branch: develop\ncheck-version-increment: false\n")
    g.write(".github/workflows/lint.yaml", lint_workflow("make lint"))
    g.write("Makefile", "lint:\n\tct lint --config .github/ct.yaml --chart-dirs .\n")
    g.commit("ct: no version check, run by make")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.NOTICE
    assert (
        "Not enforced: CI runs `ct lint` on this chart with `check-version-increment: false` in "
        ".github/ct.yaml (.github/workflows/lint.yaml line 9, Makefile line 2)."
    ) in finding.message


def test_a_ct_yaml_no_ci_step_runs_declares_nothing(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.write(".github/ct.yaml", "target-branch: develop\ncheck-version-increment: false\n")
    g.commit("ct: a config nothing runs")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.WARNING
    assert finding.data["practice"]["basis"] == "bumps-per-change"


def test_a_changelog_with_an_unreleased_section_means_bump_at_release(tmp_path: Path) -> None:
    """Issue 38, rule 1: the chart keeps a Keep a Changelog `CHANGELOG.md` whose `## [Unreleased]`
    each PR adds to; the last twenty changes were mostly release PRs that bumped, so the vote read
    "all bumped" and failed every PR. What the changelog says stands; and right after a release
    (no Unreleased heading at the tip) its history still says it."""
    g = chart_repo(tmp_path / "r")
    for number in range(1, 12):
        g.write("client/CHANGELOG.md", f"# Changelog\n\n## [unreleased]\n\n- change {number}\n")
        land(g, number, f"1.0.{number}")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.NOTICE
    assert (
        "Not enforced: `client/CHANGELOG.md` keeps an Unreleased section (`## [unreleased]`), so "
        "versions move at release."
    ) in finding.message
    g.checkout("develop").write("client/CHANGELOG.md", "# Changelog\n\n## 1.1.0\n\n- all\n")
    g.commit("chore: client chart 1.1.0 release")
    g.branch("pr2", "develop").write(*NEW_TEMPLATE).commit("after the release")
    [finding] = review(g.checkout("develop"), "pr2")
    assert finding.data["practice"]["basis"] == "changelog-unreleased"


def test_release_please_means_bump_at_release(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.write("release-please-config.json", '{"packages": {"client": {"release-type": "helm"}}}')
    g.commit("release-please")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.NOTICE
    assert "releases with release-please (release-please-config.json)" in finding.message


def test_a_pull_request_step_named_for_a_version_check_enforces(tmp_path: Path) -> None:
    g = releasing_repo(tmp_path / "r")
    g.write(
        ".github/workflows/pr.yaml",
        "on: pull_request\njobs:\n  versions:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - name: Check chart versions are bumped\n        run: ./hack/versions.sh\n",
    ).commit("a version guard")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.FAILURE
    assert (
        "CI checks the version of each PR (`Check chart versions are bumped`, "
        ".github/workflows/pr.yaml line 7)."
    ) in finding.message


# -- what the repository has released -------------------------------------------------------------


def test_a_version_bumped_and_not_yet_released_needs_no_second_bump(tmp_path: Path) -> None:
    """Issue 38, rule 3: develop bumped to the next minor one commit ago and its release tag does
    not exist yet (it was cut later, from this very change): the PR's content ships in it."""
    g = chart_repo(tmp_path / "r").tag("client-1.0.0")
    write_chart(g, "other", "other", "2.0.0").commit("another chart")
    for number in range(1, 12):
        land(g, number, f"1.0.{number}").tag(f"client-1.0.{number}")
    land(g, 20, "1.1.0")  # bumped, not released
    [finding] = review(pr_without_bump(g))
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert (
        "Not enforced: develop's version 1.1.0 is not released yet (by its release tags "
        "(`client-…`)), so this change ships in it."
    ) in finding.message
    g.tag("client-1.1.0", "develop")  # the release: now a change needs a version of its own
    [finding] = review(g)
    assert finding.severity is Severity.FAILURE


def test_a_chart_releaser_index_tells_what_is_released_as_of_the_commit(tmp_path: Path) -> None:
    g = chart_repo(tmp_path / "r")
    for number in range(1, 12):
        land(g, number, f"1.0.{number}")
    index = (
        "apiVersion: v1\nentries:\n  client:\n"
        '  - created: "2001-01-01T00:00:00.123456789Z"\n    name: client\n    version: 1.0.10\n'
        "    dependencies:\n    - name: x\n      version: 1.0.11\n"
        '  other:\n  - version: 1.0.11\n    created: "2001-01-01T00:00:00Z"\n'
        'generated: "2001-01-01T00:00:00Z"\n'
    )
    g.branch("gh-pages").write("index.yaml", index).commit("index").checkout("develop")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.NOTICE
    assert "develop's version 1.0.11 is not released yet (by `gh-pages:index.yaml`)" in (
        finding.message
    )
    # Released now: a change needs a version of its own; replayed as of 2000, it did not.
    released = index.replace("version: 1.0.10", "version: 1.0.11", 1)
    g.checkout("gh-pages").write("index.yaml", released).commit("1.0.11").checkout("develop")
    pr = OpenPR(1, g.sha("pr"), "pr")
    ctx = context_for(GitRepo(g.path), pr, [pr])
    assert run(ctx)[0].severity is Severity.FAILURE
    then = dataclasses.replace(ctx, as_of=946684800)  # 2000-01-01
    assert run(then)[0].data["practice"]["basis"] == "version-not-released"


def test_repository_release_tags_release_every_chart_at_its_version_there(tmp_path: Path) -> None:
    """aws/eks-charts tags the repository (`v0.0.242`) and CI checks each chart changed since the
    last such tag has a version of its own: a chart bumped since needs no second bump."""
    g = bumping_repo(tmp_path / "r")
    write_chart(g, "other", "other", "2.0.0").commit("another chart").tag("v0.0.1")
    land(g, 6, "1.0.5")
    [finding] = review(pr_without_bump(g))
    assert finding.severity is Severity.NOTICE
    assert "is not released yet (by the repository's release tags (`v0.0.1`))" in finding.message


# -- the other verdicts that follow the rule ------------------------------------------------------


def test_a_version_develop_took_is_a_notice_where_releases_set_versions(tmp_path: Path) -> None:
    # The PR branched before the 1.2.0 release and bumped to 1.1.1 itself; the release picks the
    # next version, whatever the PR wrote, so this is for the release to settle.
    g = releasing_repo(tmp_path / "r")
    base = g.sha("develop~1")
    g.branch("pr", base).write(*NEW_TEMPLATE)
    g.write("client/Chart.yaml", chart_yaml("1.1.1")).commit("add a Service, 1.1.1")
    taken = only(review(g.checkout("develop")), "taken-by-develop")
    assert taken.severity is Severity.NOTICE
    assert "0 of 5 recent content changes to this chart on develop bumped its version" in (
        taken.message
    )
    assert taken.message.endswith("Take 1.2.1.")


def test_a_version_develop_took_is_a_warning_where_prs_lean_to_bumping(tmp_path: Path) -> None:
    g = bumping_repo(tmp_path / "r")
    g.branch("pr", "develop~1").write(*NEW_TEMPLATE)
    g.write("client/Chart.yaml", chart_yaml("1.0.4")).commit("add a Service, 1.0.4")
    taken = only(review(g.checkout("develop")), "taken-by-develop")
    assert taken.severity is Severity.WARNING
    assert "This repository leans to bumping per change: 4 of 5" in taken.message


def test_a_race_is_a_notice_where_releases_set_versions(tmp_path: Path) -> None:
    g = releasing_repo(tmp_path / "r")
    for branch, replicas in (("pr", "7"), ("other", "8")):
        g.checkout("develop").branch(branch).write("client/values.yaml", f"replicas: {replicas}\n")
        g.write("client/Chart.yaml", chart_yaml("1.2.1")).commit(f"{branch}: 1.2.1")
    race = only(review(g.checkout("develop"), others=("other",)), "race")
    assert race.severity is Severity.NOTICE
    assert race.message.startswith("#2 also bumps this chart to 1.2.1;")
    assert "Not enforced: 0 of 5" in race.message


def test_messages_name_the_branch_the_repository_has(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r", branch="main")
    write_chart(g, "client", "client", "1.0.0").commit("client 1.0.0")
    for number in (1, 2, 3, 4):
        g.write("client/values.yaml", f"replicas: {number}\n")
        g.write("client/Chart.yaml", chart_yaml(f"1.0.{number}")).commit(f"c {number} (#{number})")
    g.branch("pr").write(*NEW_TEMPLATE).commit("add a Service").checkout("main")
    pr = OpenPR(1, g.sha("pr"), "pr")
    [finding] = run(context_for(GitRepo(g.path), pr, [pr], develop="main"))
    assert "to this chart on main bumped its version" in finding.message
    assert "develop" not in finding.message


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


def test_a_new_chart_never_released_needs_no_bump_to_be_enforced(tmp_path: Path) -> None:
    """Issue 38, rule 4, through the check: a fixture chart added at 0.1.0, never released, no
    ct.yaml, and a PR that changes it: there is no practice, so a notice, not a failure."""
    g = chart_repo(tmp_path / "r", version="0.1.0")
    [finding] = review(pr_without_bump(g))
    assert (finding.rule, finding.severity) == ("missing-bump", Severity.NOTICE)
    assert finding.data["practice"]["basis"] == "never-released"
