"""The `version` check on real git repositories: the release race of issue 4 and its edge cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.open_prs import discover_open_prs
from bot.errors import UsageError
from bot.git.repo import GitRepo
from bot.model.chart_files import content_paths, find_charts
from bot.model.config import Config
from bot.model.context import OpenPR
from bot.model.report import Finding, Severity, Suggestion
from bot.versions.claims import pr_number
from bot.versions.options import VersionConfig
from bot.versions.semver import bump_level, next_free_version, parse_version
from checks.version import CHECK, run
from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import (
    CT_LINT_WHERE,
    Scenario,
    build_scenario,
    chart_yaml,
    context_for,
    write_chart,
)

CT_LINT_PRACTICE = {
    "basis": "ct-lint-checks-version",
    "enforced": True,
    "level": "failure",
    "declared": True,
    "source": CT_LINT_WHERE,
    "changes": 0,
    "bumped": 0,
    "releases": 0,
}


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    return build_scenario(tmp_path / "repo")


def only(findings: list[Finding], rule: str) -> Finding:
    matching = [f for f in findings if f.rule == rule]
    assert len(matching) == 1, findings
    return matching[0]


def test_check_is_declared_per_chart() -> None:
    assert (CHECK.name, CHECK.title, CHECK.scope) == ("version", "Chart versions", "chart")


# -- the scenario ---------------------------------------------------------------------------------


def test_identical_bump_to_develops_merges_cleanly_and_is_a_failure(scenario: Scenario) -> None:
    [finding] = run(scenario.context(102))
    assert (finding.rule, finding.severity) == ("taken-by-develop", Severity.FAILURE)
    assert (finding.path, finding.line, finding.chart) == ("client/Chart.yaml", 5, "client")
    since = scenario.g.sha("pr-a")
    assert finding.data == {
        "base": "1.9.58",
        "head": "1.9.59",
        "develop": "1.9.59",
        "suggested": "1.9.61",
        # the scenario's CI runs ct lint on the chart: the repository declares the rule
        "practice": CT_LINT_PRACTICE,
        "case": "clean",
        "released": "client-1.9.59",
        "since": since,
        "since_pr": 101,
    }
    # Proposed by the check (the engine verifies it by re-rendering): version and appVersion,
    # which this repository keeps equal.
    assert finding.suggestion == Suggestion(
        "client/Chart.yaml", 5, 6, 'version: 1.9.61\nappVersion: "1.9.61"\n'
    )
    assert finding.title == "client: develop is at 1.9.59; take 1.9.61"
    assert finding.message.startswith(f"develop is at 1.9.59 since #101 ({since[:7]})")
    assert "merges *cleanly* because develop made the identical bump" in finding.message
    assert "1.9.59 is already released (tag `client-1.9.59`)" in finding.message
    assert finding.message.endswith("Take 1.9.61.")


def test_bump_that_conflicts_with_develops_says_so(scenario: Scenario) -> None:
    findings = run(scenario.context(106))
    taken = only(findings, "taken-by-develop")
    assert taken.severity is Severity.FAILURE
    assert (taken.data["case"], taken.data["suggested"]) == ("conflict", "1.9.61")
    assert "`Chart.yaml` will conflict on merge" in taken.message
    drift = only(findings, "app-version")
    # develop has given the chart two versions, both with appVersion equal: too few to be a rule.
    assert drift.severity is Severity.NOTICE
    assert drift.data["app_version"] == "1.9.58"
    assert drift.data["app_versions_equal"] == {"versions": 2, "equal": 2}
    assert "too few versions of it to tell" in drift.message
    assert len(findings) == 2


def versions_on_develop(g: GitBuilder, pairs: list[tuple[str, str]]) -> GitBuilder:
    """The chart released at each (version, appVersion), one squash-merged PR each."""
    for n, (version, app) in enumerate(pairs, 1):
        g.write("client/Chart.yaml", chart_yaml(version, app=app))
        g.write("client/values.yaml", f"replicas: {n}\n").commit(f"client {version} (#{n})")
    return g


def test_an_app_version_kept_equal_release_after_release_is_a_warning(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "client", "client", "1.0.0").commit("client 1.0.0")
    versions_on_develop(g, [("1.1.0", "1.1.0"), ("1.2.0", "1.2.0"), ("1.3.0", "1.3.0")])
    g.branch("pr").write("client/Chart.yaml", chart_yaml("1.3.1", app="1.3.0")).commit("chart fix")
    drift = only(review(g, "pr"), "app-version")
    assert drift.severity is Severity.WARNING
    assert drift.data["app_versions_equal"] == {"versions": 4, "equal": 4}
    assert "(its last 4 versions on develop all had `appVersion` equal to it)" in drift.message


def test_an_app_version_equal_by_chance_is_not_a_rule(tmp_path: Path) -> None:
    """Found on DataDog/helm-charts: the worker chart takes the app's version at each app release
    (2.20.0 / 2.20.0) and patches the chart alone in between (2.15.3 / 2.15.2). A chart-only patch
    keeping the app's version is this repository's practice, not a drift."""
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "client", "client", "2.15.2").commit("client 2.15.2")
    versions_on_develop(g, [("2.15.3", "2.15.2"), ("2.16.0", "2.16.0"), ("2.17.0", "2.17.0")])
    g.branch("pr").write("client/Chart.yaml", chart_yaml("2.17.1", app="2.17.0")).commit("fix")
    assert review(g, "pr") == []
    # An app release PR takes 2.17.1 for both; develop takes 2.17.1 meanwhile. The suggested fix
    # moves the chart's version alone: 2.17.1 stays the app's.
    g.checkout("develop").branch("release", "develop")
    g.write("client/Chart.yaml", chart_yaml("2.17.1", app="2.17.1")).commit("app 2.17.1")
    g.checkout("develop").write("client/Chart.yaml", chart_yaml("2.17.1", app="2.17.0"))
    g.commit("client 2.17.1 (#9)")
    taken = only(review(g, "release"), "taken-by-develop")
    assert taken.suggestion is not None
    assert taken.suggestion.replacement == "version: 2.17.2\n"


def test_a_change_develop_already_has_is_no_taken_version(tmp_path: Path) -> None:
    """Found on aws/eks-charts: #1350 bumps cni-metrics-helper to 1.22.4, and develop has the very
    same change from another PR. Merging #1350 changes nothing in the chart, so 1.22.4 names the
    same content: a notice that it is already there, not a failure, and no version to take."""
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "client", "client", "1.22.3").commit("client 1.22.3")
    g.branch("pr").write("client/values.yaml", "replicas: 4\n")
    g.write("client/Chart.yaml", chart_yaml("1.22.4")).commit("client: v1.22.4")
    g.checkout("develop").write("client/values.yaml", "replicas: 4\n")
    g.write("client/Chart.yaml", chart_yaml("1.22.4")).commit("client: v1.22.4 (#1353)")
    (finding,) = review(g, "pr")
    assert (finding.rule, finding.severity) == ("already-on-develop", Severity.NOTICE)
    assert finding.message.startswith(
        f"develop is at 1.22.4 since #1353 ({g.sha('develop')[:7]}) and already has every change "
        "this PR makes to client: merging it changes nothing there"
    )
    assert finding.suggestion is None
    # develop moves on past it: still nothing of the PR's is left to merge.
    g.write("client/README.md", "# client\n\nMore.\n").commit("client: docs (#1360)")
    assert [f.rule for f in review(g, "pr")] == ["already-on-develop"]
    # A PR with anything more for the chart is taken as before.
    g.checkout("pr").write("client/templates/more.yaml", "kind: Secret\n").commit("more")
    assert [f.rule for f in review(g, "pr")] == ["taken-by-develop"]


def test_content_without_bump_fails_with_next_free_patch(scenario: Scenario) -> None:
    [finding] = run(scenario.context(104))
    assert (finding.rule, finding.severity, finding.line) == ("missing-bump", Severity.FAILURE, 5)
    assert finding.data == {
        "base": "1.9.58",
        "head": "1.9.58",
        "develop": "1.9.59",
        "suggested": "1.9.61",
        "practice": CT_LINT_PRACTICE,
    }
    assert "client/templates/service.yaml" in finding.message
    assert (
        f"CI runs `ct lint` on this chart ({CT_LINT_WHERE}), which fails a PR whose chart version "
        "does not increase (ct's default)."
    ) in finding.message


def test_ci_and_tests_only_need_no_bump(scenario: Scenario) -> None:
    assert run(scenario.context(105)) == []


def test_free_claim_above_develop_is_ok(scenario: Scenario) -> None:
    assert run(scenario.context(103)) == []


def test_same_claim_by_two_open_prs_warns_both_naming_each_other(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("pr-g", "develop").write("client/values.yaml", "replicas: 7\n")
    g.write("client/Chart.yaml", chart_yaml("1.9.60")).commit("client: seven, 1.9.60")
    scenario.open_pr(107, "pr-g")
    [on_c] = run(scenario.context(103))
    [on_g] = run(scenario.context(107))
    assert (on_c.rule, on_c.severity, on_c.data["other_pr"]) == ("race", Severity.WARNING, 107)
    assert (on_g.rule, on_g.severity, on_g.data["other_pr"]) == ("race", Severity.WARNING, 103)
    assert on_c.data["suggested"] == on_g.data["suggested"] == "1.9.61"
    assert on_c.title == "client: version 1.9.60 is also claimed by #107"


def test_race_with_a_branch_names_the_branch(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("feature-x", "develop").write("client/Chart.yaml", chart_yaml("1.9.60"))
    g.commit("feature-x 1.9.60")
    others = [scenario.prs[103], OpenPR(0, g.sha("feature-x"), "feature-x")]
    [finding] = run(context_for(scenario.repo, scenario.prs[103], others))
    assert finding.title == "client: version 1.9.60 is also claimed by branch feature-x"


def test_rival_that_does_not_bump_claims_nothing(scenario: Scenario) -> None:
    # #104 keeps 1.9.58: no claim, so #103's 1.9.60 stays free and suggestions ignore it.
    assert run(scenario.context(103)) == []
    assert run(scenario.context(102))[0].data["suggested"] == "1.9.61"


def test_other_target_branch_is_not_a_rival(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("release", "develop").branch("hotfix", "develop")
    g.write("client/Chart.yaml", chart_yaml("1.9.60")).commit("hotfix 1.9.60").checkout("develop")
    hotfix = OpenPR(200, g.sha("hotfix"), "hotfix", base_ref="release")
    g.checkout("release").write("x.txt", "moved\n").commit("release moves").checkout("develop")
    assert run(context_for(scenario.repo, scenario.prs[103], [hotfix])) == []


# -- single-PR rules ------------------------------------------------------------------------------


@pytest.fixture
def chart_repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "client", "client", "1.9.58").commit("client 1.9.58")
    return g


def review(
    g: GitBuilder, branch: str, config: Config | None = None, chart: str = "client"
) -> list[Finding]:
    pr = OpenPR(1, g.sha(branch), branch)
    return run(context_for(GitRepo(g.path), pr, [pr], config, chart))


def test_a_version_helm_cannot_read_fails(chart_repo: GitBuilder) -> None:
    chart_repo.branch("pr").write("client/Chart.yaml", chart_yaml("1.9.59.1")).commit("bad")
    findings = review(chart_repo, "pr")
    finding = only(findings, "invalid-version")
    assert finding.severity is Severity.FAILURE
    assert finding.data["suggested"] == "1.9.59"
    assert finding.message.startswith(
        "`version: 1.9.59.1` is not a version Helm can read; Helm refuses to load the chart"
    )


def test_a_short_version_is_read_as_helm_reads_it(chart_repo: GitBuilder) -> None:
    """`1.9` loads (helm lint only warns): it is 1.9.0, which goes down from 1.9.58."""
    chart_repo.branch("pr").write("client/Chart.yaml", chart_yaml("1.9")).commit("short")
    finding = only(review(chart_repo, "pr"), "not-greater")
    assert (finding.severity, finding.data["suggested"]) == (Severity.FAILURE, "1.9.59")
    chart_repo.write("client/Chart.yaml", chart_yaml("1.10")).commit("short, up")
    assert review(chart_repo, "pr") == []


def test_a_v_prefixed_repository_is_judged_by_its_versions(tmp_path: Path) -> None:
    """aws/eks-charts writes `version: v0.5.30`, which Helm loads, packages and publishes: a bump
    is a bump, and the suggested version keeps the `v`."""
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "efa", "efa", "v0.5.29").commit("efa v0.5.29")
    g.branch("pr").write("efa/Chart.yaml", chart_yaml("v0.5.30", name="efa"))
    g.write("efa/values.yaml", "replicas: 3\n").commit("bump")
    assert review(g, "pr", chart="efa") == []
    g.checkout("develop").write("efa/Chart.yaml", chart_yaml("v0.5.30", app="x", name="efa"))
    g.commit("efa v0.5.30 (#7)")
    finding = only(review(g, "pr", chart="efa"), "taken-by-develop")
    assert (finding.data["develop"], finding.data["suggested"]) == ("v0.5.30", "v0.5.31")


def test_lower_version_fails(chart_repo: GitBuilder) -> None:
    chart_repo.branch("pr").write("client/Chart.yaml", chart_yaml("1.9.57")).commit("down")
    finding = only(review(chart_repo, "pr"), "not-greater")
    assert (finding.severity, finding.data["suggested"]) == (Severity.FAILURE, "1.9.59")


def test_minor_bump_overtaken_suggests_next_minor(chart_repo: GitBuilder) -> None:
    g = chart_repo
    g.branch("pr").write("client/Chart.yaml", chart_yaml("1.10.0")).commit("minor")
    g.checkout("develop").write("client/Chart.yaml", chart_yaml("1.10.0", app="x"))
    g.commit("Release 1.10.0 (#55)")
    finding = only(review(g, "pr"), "taken-by-develop")
    assert finding.data["suggested"] == "1.11.0"
    assert finding.data["since_pr"] == 55
    assert finding.data["released"] is None
    assert "already released" not in finding.message


def test_released_tag_conventions(chart_repo: GitBuilder) -> None:
    g = chart_repo
    g.branch("pr").write("client/Chart.yaml", chart_yaml("1.9.59"))
    g.write("client/values.yaml", "replicas: 7\n").commit("bump")
    g.checkout("develop").write("client/Chart.yaml", chart_yaml("1.9.59")).commit("bump on develop")
    assert only(review(g, "pr"), "taken-by-develop").data["released"] is None
    g.tag("v1.9.59")
    assert only(review(g, "pr"), "taken-by-develop").data["released"] == "v1.9.59"


def test_chart_yaml_only_change_without_bump_is_fine(chart_repo: GitBuilder) -> None:
    text = chart_yaml("1.9.58").replace("A test chart", "Another description")
    chart_repo.branch("pr").write("client/Chart.yaml", text).commit("describe")
    assert review(chart_repo, "pr") == []


def test_helmignored_files_are_not_content(chart_repo: GitBuilder) -> None:
    g = chart_repo
    g.write("client/.helmignore", "# not packaged\n*.txt\ndocs/\n").commit("helmignore")
    g.branch("pr").write("client/notes.txt", "n\n").write("client/docs/x.yaml", "a: 1\n").commit(
        "docs"
    )
    assert review(g, "pr") == []
    g.write("client/templates/cm.yaml", "kind: ConfigMap\n").commit("content")
    assert only(review(g, "pr"), "missing-bump").message.startswith(
        "This PR changes client/templates/cm.yaml but"
    )


def test_configured_ignore_globs(chart_repo: GitBuilder) -> None:
    chart_repo.branch("pr").write("client/examples/a.yaml", "a: 1\n").commit("example")
    assert only(review(chart_repo, "pr"), "missing-bump")
    config = Config(checks={"version": VersionConfig(ignore=["examples/**"])})
    assert review(chart_repo, "pr", config) == []


def test_develop_version_invalid_is_a_notice(chart_repo: GitBuilder) -> None:
    g = chart_repo
    g.branch("pr").write("client/Chart.yaml", chart_yaml("1.9.59")).commit("bump")
    g.checkout("develop").write("client/Chart.yaml", chart_yaml("1.9.x")).commit("oops")
    finding = only(review(g, "pr"), "develop-invalid")
    assert finding.severity is Severity.NOTICE
    assert [f.rule for f in review(g, "pr")] == ["develop-invalid"]


def test_monorepo_charts_are_judged_each_on_its_own(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "charts/alpha", "alpha", "0.1.0")
    write_chart(g, "charts/beta", "beta", "2.0.0").commit("two charts")
    g.branch("pr").write("charts/alpha/values.yaml", "replicas: 9\n")
    g.write("charts/beta/values.yaml", "replicas: 9\n")
    g.write("charts/beta/Chart.yaml", chart_yaml("2.1.0", name="beta")).commit("both")
    alpha = review(g, "pr", chart="charts/alpha")
    assert [(f.rule, f.path, f.data["suggested"]) for f in alpha] == [
        ("missing-bump", "charts/alpha/Chart.yaml", "0.1.1")
    ]
    assert review(g, "pr", chart="charts/beta") == []
    assert find_charts(GitRepo(g.path).tree(g.sha("pr"))) == ("charts/alpha", "charts/beta")


# -- helpers --------------------------------------------------------------------------------------


def test_semver_rules() -> None:
    v = parse_version
    assert v("V1.2.3") is None and v("1.2.3.4") is None and v("1.2.3-01") is None
    assert bump_level(v("1.9.58"), v("1.9.59")) == "patch"
    assert bump_level(v("1.9.58"), v("1.10.0")) == "minor"
    assert bump_level(v("1.9.58"), v("2.0.0")) == "major"
    assert bump_level(v("1.0.0-rc.1"), v("1.0.0-rc.2")) == "prerelease"
    assert str(next_free_version("patch", [v("1.9.59"), v("1.9.60"), None])) == "1.9.61"
    assert str(next_free_version("minor", [v("1.9.59"), v("1.10.0")])) == "1.11.0"
    assert str(next_free_version("prerelease", [v("1.0.0-rc.2")])) == "1.0.0-rc.3"


def test_content_paths_rules() -> None:
    paths = [
        "client/Chart.yaml",
        "client/README.md",
        "client/docs/guide.md",
        "client/ci/x.yaml",
        "client/templates/tests/test-connection.yaml",
        "client/values.yaml",
        "other/values.yaml",
        "client/build/out.bin",
        "client/build/keep.yaml",
    ]
    # As in Helm, an excluded directory stays excluded whole; `!` brings back single files.
    helmignore = "build/\n!build/keep.yaml\n*.yaml\n!values.yaml\n"
    assert content_paths(paths, "client", helmignore=helmignore) == ("client/values.yaml",)


def test_pr_number_from_subjects() -> None:
    assert pr_number("client: bump (#123)") == 123
    assert pr_number("Merge pull request #45 from org/branch") == 45
    assert pr_number("client: see #12 for context") is None


# -- open PR discovery ----------------------------------------------------------------------------


def test_pull_refs_are_discovered_and_merged_ones_dropped(scenario: Scenario) -> None:
    g = scenario.g
    g.pull_ref(7, "pr-b").pull_ref(8, "pr-c").pull_ref(101, "pr-a")
    found = discover_open_prs(scenario.repo, scenario.develop, None, exclude_head=None)
    assert [(pr.number, pr.head) for pr in found] == [(7, g.sha("pr-b")), (8, g.sha("pr-c"))]
    found = discover_open_prs(scenario.repo, scenario.develop, None, exclude_head=g.sha("pr-b"))
    assert [pr.number for pr in found] == [8]


def test_branches_are_discovered_without_pull_refs(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("main", "develop").branch("pr-w", "develop")
    g.write("client/values.yaml", "replicas: 9\n").commit("w")  # a branch must touch a chart
    g.run_git("update-ref", "refs/remotes/origin/pr-w", g.sha("pr-w"))
    g.run_git("remote", "add", "origin", "https://github.com/acme/charts.git")
    for name in ("pr-b", "pr-c", "pr-d", "pr-e", "pr-f"):  # pushed, and tracked by the local one
        g.run_git("update-ref", f"refs/remotes/origin/{name}", g.sha(name))
        g.run_git("config", f"branch.{name}.remote", "origin")
        g.run_git("config", f"branch.{name}.merge", f"refs/heads/{name}")
    g.run_git("update-ref", "refs/remotes/origin/pr-c", g.sha("pr-b"))  # shadowed by local pr-c
    g.run_git("update-ref", "refs/remotes/origin/master", g.sha("pr-b"))
    g.checkout("develop").run_git("branch", "-D", "pr-w")
    g.branch("experiment", "develop").write("client/values.yaml", "replicas: 8\n")
    g.commit("an experiment, pushed nowhere: no PR").checkout("develop")
    found = discover_open_prs(scenario.repo, scenario.develop, None, exclude_head=None)
    assert [(pr.number, pr.ref) for pr in found] == [
        (0, "pr-b"),
        (0, "pr-c"),
        (0, "pr-d"),
        (0, "pr-e"),
        (0, "pr-f"),
        (0, "pr-w"),
    ]
    assert found[-1].head == g.sha("origin/pr-w")
    assert found[1].head == g.sha("pr-c")  # the local branch stands for the one it tracks


def test_explicit_open_prs_replace_discovery(scenario: Scenario) -> None:
    g = scenario.g
    g.pull_ref(7, "pr-b")
    found = discover_open_prs(scenario.repo, scenario.develop, ["12=pr-c"], exclude_head=None)
    assert found == (OpenPR(12, g.sha("pr-c"), "pr-c"),)
    with pytest.raises(UsageError, match=r"^--open-pr 'pr-c': expected NUMBER=REF"):
        discover_open_prs(scenario.repo, scenario.develop, ["pr-c"], exclude_head=None)
    with pytest.raises(UsageError, match=r"^--open-pr '3=nope': unknown ref 'nope'$"):
        discover_open_prs(scenario.repo, scenario.develop, ["3=nope"], exclude_head=None)


def test_new_chart_taken_by_develop_and_missing_version(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo").write("README.md", "charts\n").commit("init")
    g.branch("pr").write("web/Chart.yaml", chart_yaml("0.1.0", name="web"))
    g.write("web/values.yaml", "replicas: 1\n").commit("web 0.1.0")
    g.checkout("develop").write("web/Chart.yaml", chart_yaml("0.1.0", name="web")).commit(
        "web (#9)"
    )
    finding = only(review(g, "pr", chart="web"), "taken-by-develop")
    assert finding.data["suggested"] == "0.1.1" and finding.data["since_pr"] == 9
    assert "this PR's new chart at 0.1.0 is taken" in finding.message
    g.checkout("pr").write("web/Chart.yaml", "apiVersion: v2\nname: web\n").commit("no version")
    finding = only(review(g, "pr", chart="web"), "invalid-version")
    assert finding.message.startswith("`web/Chart.yaml` has no `version`;")
