"""Issue 40, item 5: never the wrong range in silence. In a shallow clone that lacks the merge base,
`review` and `list-changed` exit 2 naming the cause and the fix, rather than measuring the PR from
the target's tip; where the clone holds the merge base, both read the same range as a full clone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.git.repo import GitRepo
from bot.git.shallow import FIX, is_shallow
from bot.report.exit_status import EXIT_ERROR
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

CHARTS = ("one", "two", "three")


@pytest.fixture
def origin(tmp_path: Path) -> GitBuilder:
    """`main` with three charts after some history, which then moves on in two of them after `feature` forked;
    `feature` changes chart `one` only."""
    g = GitBuilder(tmp_path / "origin", branch="main")
    for n in range(3):  # history before the fork, which a shallow clone of depth 3 cuts
        g.write("README.md", f"charts, take {n}\n").commit(f"readme {n}")
    for name in CHARTS:
        for path, text in chart_files(name, name).items():
            g.write(path, text)
    g.commit("three charts").branch("feature")
    g.write("one/templates/extra.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    g.write("one/Chart.yaml", chart_files("one", "one", "1.0.1")["one/Chart.yaml"])
    g.commit("feature: a ConfigMap in one").checkout("main")
    for name in ("two", "three"):
        g.write(f"{name}/templates/NOTES.txt", f"{name} moved on\n").commit(f"main: {name}")
    return g


def clone(origin: GitBuilder, to: Path, depth: int | None) -> GitBuilder:
    """A clone of both branches, `depth` commits deep on each (None: whole)."""
    to.mkdir()
    g = GitBuilder.__new__(GitBuilder)
    g.path = to
    deep = [f"--depth={depth}"] if depth else []
    g.run_git("clone", "-q", "--no-single-branch", *deep, f"file://{origin.path}", ".")
    return g


def review(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = ["review", "--repo", str(repo), "--base", "origin/main", "--head", "origin/feature"]
    code = main([*args, "--no-open-prs", "--format", "json"])
    out, err = capsys.readouterr()
    return code, out, err


def list_changed(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(
        ["list-changed", "--repo", str(repo), "--base", "origin/main", "--head", "origin/feature"]
    )
    out, err = capsys.readouterr()
    return code, out, err


def test_a_shallow_clone_without_the_merge_base_is_refused_naming_the_fix(
    origin: GitBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shallow = clone(origin, tmp_path / "shallow", depth=1)
    assert is_shallow(GitRepo(shallow.path))
    code, out, err = review(shallow.path, capsys)
    assert (code, out) == (EXIT_ERROR, "")
    [line] = err.strip().splitlines()
    assert "is a shallow clone and does not hold the merge base of origin/main and" in line
    assert "origin/feature" in line and line.endswith(FIX)
    assert "`git fetch --unshallow`" in line and "`fetch-depth: 0`" in line
    code, out, err = list_changed(shallow.path, capsys)
    assert (code, out) == (EXIT_ERROR, "")  # never the seven charts of main's tip
    assert "is a shallow clone" in err and FIX in err


def test_a_shallow_clone_holding_the_merge_base_reads_the_same_range_as_a_full_one(
    origin: GitBuilder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = clone(origin, tmp_path / "full", depth=None)
    deep = clone(origin, tmp_path / "deep", depth=3)  # main's two commits and the fork point
    assert is_shallow(GitRepo(deep.path)) and not is_shallow(GitRepo(full.path))
    assert list_changed(deep.path, capsys) == list_changed(full.path, capsys) == (0, "one\n", "")
    code, out, _ = review(deep.path, capsys)
    full_code, full_out, _ = review(full.path, capsys)
    assert code == full_code
    shallow_report, full_report = json.loads(out), json.loads(full_out)
    assert [c["path"] for c in shallow_report["charts"]] == ["one"]
    rules = sorted((f["check"], f["rule"], f["chart"]) for f in shallow_report["findings"])
    assert rules == sorted((f["check"], f["rule"], f["chart"]) for f in full_report["findings"])
    assert shallow_report["base"] == full_report["base"]


def test_unrelated_histories_are_refused_not_measured_from_the_tip(
    origin: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    origin.run_git("checkout", "-q", "--orphan", "elsewhere")
    origin.write("one/templates/other.yaml", "kind: ConfigMap\n").commit("unrelated")
    args = ["--repo", str(origin.path), "--base", "main", "--head", "elsewhere"]
    assert main(["review", *args, "--no-open-prs"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "main and elsewhere have no commit in common" in err and "shallow" not in err
    assert main(["list-changed", *args]) == EXIT_ERROR
    assert "no commit in common" in capsys.readouterr().err
