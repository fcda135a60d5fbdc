"""Which changes a branch merged, each as the PR it was: bot/git/history.py on real repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from unittest import mock

import pytest

from bot.git.history import (
    LogEntry,
    chart_dirs_named,
    merged_change,
    merged_changes,
    parse_first_parent_log,
    pr_number,
)
from bot.git.repo import GIT_DATES_END, GitRepo
from tests.support.gitbuilder import GitBuilder

T0 = 1_700_000_000  # Nov 2023: dates git reads as dates


def dated(g: GitBuilder, message: str, when: int) -> GitBuilder:
    date = f"@{when} +0000"
    with mock.patch.dict(os.environ, {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}):
        return g.commit(message)


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    """develop, oldest first: the chart; a merge commit of PR 5; a squash merge of PR 7 (whose own
    head is kept as refs/pull/7/head); a docs commit; a plain commit to the chart."""
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", "name: app\nversion: 1.0.0\n")
    dated(g, "app 1.0.0", T0 + 1_000_000)
    g.branch("feature").write("charts/app/values.yaml", "a: 1\n")
    dated(g, "feature: values", T0 + 2_000_000).checkout("develop")
    g.merge("feature", "Merge pull request #5 from someone/feature")
    g.branch("pr7").write("charts/app/values.yaml", "a: 2\n")
    dated(g, "pr7: work in progress", T0 + 3_000_000).pull_ref(7, "pr7").checkout("develop")
    g.write("charts/app/values.yaml", "a: 2\n")
    dated(g, "Set a to 2 (#7)", T0 + 3_100_000)
    g.write("docs/index.md", "# Docs\n")
    dated(g, "docs", T0 + 4_000_000)
    g.write("charts/other/Chart.yaml", "name: other\nversion: 0.1.0\n")
    return dated(g, "add other", T0 + 5_000_000)


def test_each_first_parent_commit_is_read_with_its_parents_date_and_paths(g: GitBuilder) -> None:
    entries = GitRepo(g.path).first_parent_log("develop")
    assert [e.subject for e in entries] == [
        "add other",
        "docs",
        "Set a to 2 (#7)",
        "Merge pull request #5 from someone/feature",
        "app 1.0.0",
    ]
    assert entries[0].paths == ("charts/other/Chart.yaml",)
    assert entries[0].date == T0 + 5_000_000
    merge = entries[3]
    assert len(merge.parents) == 2
    assert merge.paths == ("charts/app/values.yaml",)  # against the first parent
    assert entries[-1].parents == ()


def test_since_stops_at_older_commits(g: GitBuilder) -> None:
    entries = GitRepo(g.path).first_parent_log("develop", since=T0 + 3_500_000)
    assert [e.subject for e in entries] == ["add other", "docs"]


def test_since_past_the_dates_git_reads_lists_nothing(g: GitBuilder) -> None:
    """git takes no date from 2100 on and may then ignore --since and list everything; the
    entries are held to `since` whatever git did."""
    repo = GitRepo(g.path)
    for since in (GIT_DATES_END, 32_472_144_000):  # 2100-01-01, 2999-01-01
        assert repo.first_parent_log("develop", since=since) == []
    assert len(repo.first_parent_log("develop", since=T0)) == 5


def test_a_merge_is_its_second_parent_against_its_first(g: GitBuilder) -> None:
    entry = GitRepo(g.path).first_parent_log("develop")[3]
    change = merged_change(entry, {})
    assert change is not None
    assert (change.kind, change.number) == ("merge", 5)
    assert (change.base, change.head) == (entry.parents[0], entry.parents[1])
    assert change.head == g.sha("feature")


def test_a_squash_merge_is_the_pr_head_when_the_pull_ref_is_kept(g: GitBuilder) -> None:
    repo = GitRepo(g.path)
    entry = repo.first_parent_log("develop")[2]
    bare = merged_change(entry, {})
    assert bare is not None
    assert (bare.kind, bare.number, bare.head) == ("squash", 7, entry.sha)
    pulled = merged_change(entry, repo.refs("refs/pull/*/head"))
    assert pulled is not None
    assert (pulled.kind, pulled.head, pulled.base) == (
        "squash+pull-ref",
        g.sha("pr7"),
        entry.parents[0],
    )


def test_a_root_commit_is_no_change(g: GitBuilder) -> None:
    assert merged_change(GitRepo(g.path).first_parent_log("develop")[-1], {}) is None


def test_only_the_changes_that_touch_a_chart_count_toward_last(g: GitBuilder) -> None:
    entries = GitRepo(g.path).first_parent_log("develop")

    def touches(paths: object) -> bool:
        return any(str(p).startswith("charts/") for p in paths)  # type: ignore[attr-defined]

    every = list(merged_changes(entries, {}, touches))
    assert [c.subject for c in every] == [
        "add other",
        "Set a to 2 (#7)",
        "Merge pull request #5 from someone/feature",
    ]
    assert [c.kind for c in every] == ["commit", "squash", "merge"]
    assert [c.subject for c in merged_changes(entries, {}, touches, last=2)] == [
        "add other",
        "Set a to 2 (#7)",
    ]


def test_a_rebase_merge_s_commits_are_one_change(g: GitBuilder) -> None:
    """GitHub's "Rebase and merge" (and merge bots like Prow's tide) commit each of a PR's commits
    at one moment: found on a public repository, judged commit by commit, the PR's first commit
    lacked the bump its last one made (a false missing bump)."""
    when = T0 + 6_000_000
    g.write("charts/app/values.yaml", "a: 3\n")
    dated(g, "feat: three", when)
    g.write("charts/app/Chart.yaml", "name: app\nversion: 1.0.1\n")
    dated(g, "chore(app): release 1.0.1", when)
    g.write("charts/app/values.yaml", "a: 4\n")
    dated(g, "feat: four", when + 60)  # the next merge, a minute later
    entries = GitRepo(g.path).first_parent_log("develop")
    found = list(merged_changes(entries, {}, lambda paths: True, last=3))
    assert [(c.kind, c.subject) for c in found] == [
        ("commit", "feat: four"),
        ("rebase", "chore(app): release 1.0.1 (and 1 more commits of one merge)"),
        ("commit", "add other"),
    ]
    rebase = found[1]
    assert (rebase.base, rebase.head) == (g.sha("develop~3"), g.sha("develop~1"))
    assert set(rebase.paths) == {"charts/app/values.yaml", "charts/app/Chart.yaml"}


def test_charts_of_the_past_are_named_by_their_chart_yaml(g: GitBuilder) -> None:
    entries = GitRepo(g.path).first_parent_log("develop")
    assert chart_dirs_named(entries) == {"charts/app", "charts/other"}


@pytest.mark.parametrize(
    ("subject", "number"),
    [
        ("Fix the probe (#12)", 12),
        ("Fix the probe (#12)  ", 12),
        ("Merge pull request #34 from a/b", 34),
        ("Fix #12 in the probe", None),
        ("Bump to 1.2 (see #3) and more", None),
    ],
)
def test_pr_number_from_github_merge_subjects(subject: str, number: int | None) -> None:
    assert pr_number(subject) == number


def test_parse_reads_paths_with_spaces_and_no_paths() -> None:
    data = (
        b"\x1ea1 p1\x00"
        b"100\x00"
        b"first\x00\n"
        b"dir/a file.md\x00"
        b"b.md\x00"
        b"\x1ea2 p2 p3\x00"
        b"90\x00"
        b"Merge empty\x00"
    )
    first, merge = parse_first_parent_log(data)
    assert first.paths == ("dir/a file.md", "b.md")
    assert (merge.parents, merge.paths, merge.date) == (("p2", "p3"), (), 90)


def _kept_to(entries: list[LogEntry], path: str) -> list[tuple[str, tuple[str, ...]]]:
    """What the whole log says of `path`: its commits that change files under it, with those."""
    out = []
    for e in entries:
        under = tuple(p for p in e.paths if path in (".", "") or p.startswith(path + "/"))
        if under:
            out.append((e.sha, under))
    return out


def test_a_directory_s_changes_are_the_whole_log_kept_to_it(g: GitBuilder) -> None:
    g.write("charts/a[1]/Chart.yaml", "name: x\n").write("charts/a1/Chart.yaml", "name: y\n")
    dated(g, "glob-like names", T0 + 6_000_000)
    repo = GitRepo(g.path)
    tip = g.sha("develop")
    for depth in (2, 3, 4, 100):  # the merge, the squash and the chart's creation, or not
        whole = repo.first_parent_log(tip, max_count=depth)
        for path in ("charts/app", "charts/other", "charts/a[1]", "docs", "."):
            changes = repo.first_parent_changes(tip, depth, path)
            assert [(e.sha, e.paths) for e in changes] == _kept_to(whole, path), (depth, path)
            parents = {e.sha: e.parents for e in whole}
            assert [e.parents for e in changes] == [parents[e.sha] for e in changes]
    merge = repo.first_parent_changes(tip, 100, "charts/app")[1]
    assert merge.subject.startswith("Merge pull request #5") and len(merge.parents) == 2


def test_a_moved_chart_is_its_old_paths_and_its_new_ones(g: GitBuilder) -> None:
    """A chart moved with `git mv` is one chart gone and one come: both directories are changed
    paths, whatever the user's `diff.renames`; and a blob the history lacks is never read to look
    for renames (found on a mirror missing one image: the whole log failed)."""
    g.run_git("mv", "charts/other", "charts/renamed")
    dated(g, "move other", T0 + 7_000_000)
    g.run_git("config", "diff.renames", "copies")
    repo = GitRepo(g.path)
    moved = ("charts/other/Chart.yaml", "charts/renamed/Chart.yaml")
    assert tuple(sorted(repo.first_parent_log("develop", max_count=1)[0].paths)) == moved
    for path in ("charts/other", "charts/renamed"):
        (entry,) = repo.first_parent_changes(g.sha("develop"), 1, path)
        assert entry.paths == (f"{path}/Chart.yaml",)


def test_history_needs_no_blob(g: GitBuilder, tmp_path: Path) -> None:
    """Names come from trees alone: a repository that lost the blob of a file deleted beside an
    added one (a pair rename detection would compare) still lists both."""
    g.write("docs/big.gif", "GIF89a" + "x" * 5000)
    dated(g, "an image", T0 + 7_000_000)
    blob = g.run_git("rev-parse", "develop:docs/big.gif").strip()
    g.remove("docs/big.gif").write("docs/small.gif", "GIF89a" + "y" * 4000)
    dated(g, "another image", T0 + 7_100_000)
    g.run_git("repack", "-a", "-d", "-q")
    listed = g.run_git("rev-list", "--objects", "--all").splitlines()
    kept = [line.split(" ")[0] for line in listed if line and not line.startswith(blob)]
    pack_dir = g.path / ".git" / "objects" / "pack"
    subprocess.run(
        ["git", "-C", str(g.path), "pack-objects", "-q", str(tmp_path / "pack")],
        input="\n".join(kept) + "\n",
        text=True,
        check=True,
    )
    for old in pack_dir.iterdir():
        old.unlink()
    for new in tmp_path.glob("pack-*"):
        new.rename(pack_dir / new.name)
    assert (
        "unable to read"
        in subprocess.run(
            ["git", "-C", str(g.path), "log", "-M", "--name-only", "-1", "develop"],
            capture_output=True,
            text=True,
        ).stderr
    )  # git itself fails where it looks for renames
    (entry,) = GitRepo(g.path).first_parent_log("develop", max_count=1)
    assert sorted(entry.paths) == ["docs/big.gif", "docs/small.gif"]
