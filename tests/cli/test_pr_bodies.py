"""The open PRs' bodies on the command line: `--pr-body-of NUMBER=FILE`, else the branch's commit
messages (bot/cli/open_prs.py), as the duplicates check reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.cli.open_prs import Discovery, discover_open_prs, parse_bodies
from bot.errors import UsageError
from bot.git.repo import GitRepo
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

VALUES = "app/values.yaml"
NEW_VALUES = "replicas: 2\n"


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("mine").write(VALUES, NEW_VALUES).commit("Two replicas\n\nFixes #31")
    g.checkout("develop").branch("theirs").write("app/README.md", "the chart\n")
    g.commit("Document the chart").write("app/NOTES.txt", "hi\n").commit("Notes\n\nCloses #31")
    return g.checkout("develop")


def test_a_branch_body_is_its_commit_messages_newest_first(g: GitBuilder) -> None:
    (pr,) = discover_open_prs(
        GitRepo(g.path), g.sha("develop"), ["7=theirs"], None, rules=Discovery(bodies={})
    )
    assert pr.body == "Notes\n\nCloses #31\n\nDocument the chart"


def test_a_given_body_replaces_the_commit_messages(g: GitBuilder, tmp_path: Path) -> None:
    body = tmp_path / "7.md"
    body.write_text("Adds docs.\n")
    rules = Discovery(bodies=parse_bodies([f"7={body}"]))
    (pr,) = discover_open_prs(GitRepo(g.path), g.sha("develop"), ["7=theirs"], None, rules=rules)
    assert pr.body == "Adds docs.\n"


def test_without_bodies_asked_for_none_is_read(g: GitBuilder) -> None:
    (pr,) = discover_open_prs(GitRepo(g.path), g.sha("develop"), ["7=theirs"], None)
    assert pr.body == ""


@pytest.mark.parametrize(
    "arg, error",
    [
        ("seven=x.md", "--pr-body-of 'seven=x.md': expected NUMBER=FILE, e.g. 12=pr-12.md"),
        ("7=/nonexistent/7.md", "--pr-body-of '7=/nonexistent/7.md': No such file or directory"),
    ],
)
def test_a_malformed_or_unreadable_body_is_a_usage_error(arg: str, error: str) -> None:
    with pytest.raises(UsageError) as raised:
        parse_bodies([arg])
    assert str(raised.value) == error


def review_json(g: GitBuilder, tmp_path: Path, *extra: str) -> list[dict[str, object]]:
    out = tmp_path / "report.json"
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "mine"]
    main([*args, "--open-pr", "7=theirs", "--format", "json", "--output", str(out), *extra])
    findings = json.loads(out.read_text())["findings"]
    return [f for f in findings if f["check"] == "duplicates"]


def test_the_cli_finds_the_shared_issue_in_both_branches_commits(
    g: GitBuilder, tmp_path: Path
) -> None:
    (found,) = review_json(g, tmp_path)
    assert (found["rule"], found["data"]["pr"], found["data"]["issues"]) == (
        "same-issue",
        7,
        ["#31"],
    )


def test_the_cli_reads_pr_body_of_in_place_of_the_commits(g: GitBuilder, tmp_path: Path) -> None:
    body = tmp_path / "7.md"
    body.write_text("Only docs, see #31.\n")
    assert review_json(g, tmp_path, "--pr-body-of", f"7={body}") == []
    body.write_text("Fixes #31\n")
    assert [f["rule"] for f in review_json(g, tmp_path, "--pr-body-of", f"7={body}")] == [
        "same-issue"
    ]


def test_the_cli_exits_2_naming_a_bad_pr_body_of(
    g: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "mine"]
    assert main([*args, "--pr-body-of", "7"]) == 2
    assert "--pr-body-of '7': expected NUMBER=FILE" in capsys.readouterr().err
