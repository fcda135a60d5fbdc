"""The release board and `chart-review versions`, on the release race of issue 4."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bot.cli import versions as versions_cli
from bot.git.repo import GitRepo
from bot.model.context import OpenPR
from bot.versions.board import board_json, board_markdown, build_board
from checks.version import run
from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import Scenario, build_scenario, chart_yaml, write_chart


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    return build_scenario(tmp_path / "repo")


def rows(board_doc: dict, chart: int = 0) -> list[tuple]:
    return [
        (r["pr"], r["branch"], r["base_version"], r["claimed"], r["status"], r["suggested"])
        for r in board_doc["charts"][chart]["rows"]
    ]


def test_board_reads_the_merge_queue_top_to_bottom(scenario: Scenario) -> None:
    board = build_board(scenario.repo, scenario.develop, scenario.prs.values())
    doc = board_json(board)
    assert doc["schema"] == 1 and doc["develop"] == scenario.develop
    [chart] = doc["charts"]
    assert (chart["path"], chart["name"], chart["develop_version"]) == (
        "client",
        "client",
        "1.9.59",
    )
    assert rows(doc) == [
        (103, "pr-c", "1.9.59", "1.9.60", "ok", None),
        (102, "pr-b", "1.9.58", "1.9.59", "taken by develop", "1.9.61"),
        (106, "pr-f", "1.9.58", "1.9.59", "taken by develop", "1.9.61"),
        (104, "pr-d", "1.9.58", None, "missing bump", "1.9.61"),
        (105, "pr-e", "1.9.58", None, "no bump needed", None),
    ]
    assert chart["rows"][0]["head"] == scenario.g.sha("pr-c")


def test_board_row_and_check_agree(scenario: Scenario) -> None:
    board = build_board(scenario.repo, scenario.develop, scenario.prs.values())
    for row in board.charts[0].rows:
        findings = [f for f in run(scenario.context(row.pr.number)) if f.rule != "app-version"]
        if row.status in ("ok", "no-bump-needed"):
            assert findings == []
        else:
            [finding] = findings
            assert (finding.rule, finding.data["suggested"]) == (row.status, row.suggested)


def test_collisions_are_named_and_ordered_after_ok(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("pr-g", "develop").write("client/Chart.yaml", chart_yaml("1.9.60")).commit("1.9.60")
    g.branch("pr-h", "develop").write("client/Chart.yaml", chart_yaml("1.9.62")).commit("1.9.62")
    scenario.open_pr(107, "pr-g")
    scenario.open_pr(108, "pr-h")
    doc = board_json(build_board(scenario.repo, scenario.develop, scenario.prs.values()))
    assert rows(doc)[:4] == [
        (108, "pr-h", "1.9.59", "1.9.62", "ok", None),
        (103, "pr-c", "1.9.59", "1.9.60", "collides with #107", "1.9.63"),
        (107, "pr-g", "1.9.59", "1.9.60", "collides with #103", "1.9.63"),
        (102, "pr-b", "1.9.58", "1.9.59", "taken by develop", "1.9.63"),
    ]
    assert doc["charts"][0]["rows"][1]["collides_with"] == [107]


def test_markdown_links_prs_and_names_branches(scenario: Scenario) -> None:
    g = scenario.g
    g.branch("feature|x", "develop").write("client/Chart.yaml", chart_yaml("1.9.60")).commit("x")
    prs = [*scenario.prs.values(), OpenPR(0, g.sha("feature|x"), "feature|x")]
    board = build_board(scenario.repo, scenario.develop, prs)
    text = board_markdown(board, link_fmt="https://github.com/o/r/pull/{number}")
    assert "### client (`client`): develop at 1.9.59" in text
    assert "| PR | branch | base | claims | status | suggested |" in text
    link = "https://github.com/o/r/pull/"
    assert f"| [#102]({link}102) | pr-b | 1.9.58 | 1.9.59 | taken by develop | 1.9.61 |" in text
    assert "| — | feature\\|x | 1.9.59 | 1.9.60 | collides with #103 | 1.9.61 |" in text
    collides = "collides with branch feature\\|x"
    assert f"| [#103]({link}103) | pr-c | 1.9.59 | 1.9.60 | {collides} | 1.9.61 |" in text


def test_monorepo_board_has_one_table_per_touched_chart(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "charts/alpha", "alpha", "0.1.0")
    write_chart(g, "charts/beta", "beta", "2.0.0")
    write_chart(g, "charts/gamma", "gamma", "1.0.0").commit("three charts")
    g.branch("one").write("charts/alpha/values.yaml", "replicas: 9\n")
    g.write("charts/beta/Chart.yaml", chart_yaml("2.0.1", name="beta")).commit("alpha, beta")
    g.branch("two", "develop").write("charts/beta/Chart.yaml", chart_yaml("2.1.0", name="beta"))
    g.commit("beta minor")
    prs = [OpenPR(1, g.sha("one"), "one"), OpenPR(2, g.sha("two"), "two")]
    repo = GitRepo(g.path)
    doc = board_json(build_board(repo, g.sha("develop"), prs))
    assert [c["path"] for c in doc["charts"]] == ["charts/alpha", "charts/beta"]
    assert rows(doc, 0) == [(1, "one", "0.1.0", None, "missing bump", "0.1.1")]
    assert rows(doc, 1) == [
        (1, "one", "2.0.0", "2.0.1", "ok", None),
        (2, "two", "2.0.0", "2.1.0", "ok", None),
    ]
    only_gamma = board_json(build_board(repo, g.sha("develop"), prs, charts=["charts/gamma"]))
    assert only_gamma["charts"] == [
        {"path": "charts/gamma", "name": "gamma", "develop_version": "1.0.0", "rows": []}
    ]


def test_charts_ct_yaml_leaves_out_are_not_on_the_board(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "charts/alpha", "alpha", "0.1.0")
    write_chart(g, "charts/legacy", "legacy", "1.0.0")
    write_chart(g, "tests/fixtures/broken", "broken", "0.0.1")
    g.write("ct.yaml", "excluded-charts: [legacy]\n").commit("charts and a fixture")
    g.branch("one")
    for path in ("charts/alpha", "charts/legacy", "tests/fixtures/broken"):
        g.write(f"{path}/values.yaml", "replicas: 9\n")
    g.commit("touch all three")
    doc = board_json(build_board(GitRepo(g.path), g.sha("develop"), [OpenPR(1, g.sha("one"))]))
    assert [c["path"] for c in doc["charts"]] == ["charts/alpha"]


def test_a_pr_that_branched_before_a_chart_existed_does_not_remove_it(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    write_chart(g, "charts/alpha", "alpha", "0.1.0").commit("alpha")
    g.branch("old").write("charts/alpha/values.yaml", "replicas: 2\n")
    g.write("charts/alpha/Chart.yaml", chart_yaml("0.1.1", name="alpha")).commit("alpha 0.1.1")
    g.checkout("develop")
    write_chart(g, "charts/beta", "beta", "1.0.0").commit("beta, added after #1 branched")
    g.branch("gone", "develop").run_git("rm", "-rq", "charts/beta")
    g.commit("drop beta")
    prs = [OpenPR(1, g.sha("old"), "old"), OpenPR(2, g.sha("gone"), "gone")]
    doc = board_json(build_board(GitRepo(g.path), g.sha("develop"), prs))
    assert [c["path"] for c in doc["charts"]] == ["charts/alpha", "charts/beta"]
    assert rows(doc, 0) == [(1, "old", "0.1.0", "0.1.1", "ok", None)]
    assert rows(doc, 1) == [(2, "gone", "1.0.0", None, "removes the chart", None)]


# -- the CLI --------------------------------------------------------------------------------------


def versions(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="chart-review")
    versions_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["versions", *argv])
    return int(args.func(args))


def test_cli_json_from_pull_refs(scenario: Scenario, capsys: pytest.CaptureFixture[str]) -> None:
    g = scenario.g
    for number, pr in scenario.prs.items():
        g.pull_ref(number, pr.ref)
    g.pull_ref(101, "pr-a")  # merged: not on the board
    assert versions("--repo", str(g.path), "--format", "json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r[0] for r in rows(doc)] == [103, 102, 106, 104, 105]
    assert rows(doc)[1] == (102, None, "1.9.58", "1.9.59", "taken by develop", "1.9.61")


def test_cli_markdown_with_explicit_open_prs(
    scenario: Scenario, capsys: pytest.CaptureFixture[str]
) -> None:
    g = scenario.g
    g.pull_ref(7, "pr-d")  # ignored: --open-pr replaces discovery
    code = versions("--repo", str(g.path), "--open-pr", "102=pr-b", "--open-pr", "103=pr-c")
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(f"## Chart versions on develop (`{scenario.develop[:7]}`)")
    assert "| #103 | pr-c | 1.9.59 | 1.9.60 | ok | — |" in out
    assert "| #102 | pr-b | 1.9.58 | 1.9.59 | taken by develop | 1.9.61 |" in out
    assert "#7" not in out and "pr-d" not in out


def test_cli_defaults_to_the_default_branch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = GitBuilder(tmp_path / "repo", branch="main")
    write_chart(g, "client", "client", "1.0.0").commit("init")
    g.branch("feature").write("client/values.yaml", "replicas: 2\n").commit("change").checkout(
        "main"
    )
    # A branch counts as an open PR once it is on the remote (a local one alone is nobody's PR).
    g.run_git("update-ref", "refs/remotes/origin/feature", g.sha("feature"))
    g.run_git("branch", "-D", "feature")
    assert versions("--repo", str(g.path), "--format", "json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["develop"] == g.sha("main")
    assert rows(doc) == [(None, "feature", "1.0.0", None, "missing bump", "1.0.1")]
    # The words name the branch the repository has (issue 38), never a develop it lacks.
    assert versions("--repo", str(g.path)) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("## Chart versions on main (") and "develop" not in markdown
    g.branch("taken", "main").write("client/Chart.yaml", chart_yaml("1.0.1")).commit("1.0.1")
    g.checkout("main").write("client/Chart.yaml", chart_yaml("1.0.1")).commit("main takes it")
    g.run_git("update-ref", "refs/remotes/origin/taken", g.sha("taken"))
    assert versions("--repo", str(g.path), "--format", "json") == 0
    statuses = [r["status"] for r in json.loads(capsys.readouterr().out)["charts"][0]["rows"]]
    assert "taken by main" in statuses


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--develop", "nope"], "chart-review: error: unknown develop ref 'nope'\n"),
        (
            ["--open-pr", "x=pr-b"],
            "chart-review: error: --open-pr 'x=pr-b': expected NUMBER=REF, e.g. 12=feature-x\n",
        ),
        (["--open-pr", "5=gone"], "chart-review: error: --open-pr '5=gone': unknown ref 'gone'\n"),
    ],
)
def test_cli_bad_arguments_exit_2(
    scenario: Scenario, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert versions("--repo", str(scenario.g.path), *argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message)


def test_cli_not_a_repository_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert versions("--repo", str(tmp_path)) == 2
    assert capsys.readouterr().err == f"chart-review: error: {tmp_path}: not a git repository\n"


def test_markdown_neutralises_chart_names_branches_and_versions_from_prs(tmp_path: Path) -> None:
    """A chart named like a mention and an image, a branch with a mention and an HTML tag, a claimed
    version with a bidi override: shown literally, not as a ping, an image or reordered text."""
    g = GitBuilder(tmp_path / "repo")
    hostile = "@carol ![x](https://x/y)"
    write_chart(g, "charts/carol", f'"{hostile}"', "1.0.0").commit("carol")
    g.branch("feat/@dave<b>", "develop")
    g.write("charts/carol/Chart.yaml", chart_yaml("1.0.1\u202e", name=f'"{hostile}"')).commit("x")
    prs = [OpenPR(7, g.sha("feat/@dave<b>"), "feat/@dave<b>")]
    board = build_board(GitRepo(g.path), g.sha("develop"), prs)
    assert board_json(board)["charts"][0]["name"] == hostile  # the data stays raw
    text = board_markdown(board)
    zwj = "\u200d"
    assert f"### @{zwj}carol ![x\\](https://x/y) (`charts/carol`): develop at 1.0.0\n" in text
    assert (
        f"| #7 | feat/@{zwj}dave&lt;b> | 1.0.0 | 1.0.1\\u202e | invalid version | 1.0.1 |" in text
    )
    assert "@carol" not in text and "@dave" not in text and "<b>" not in text
