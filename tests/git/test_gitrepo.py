"""Resolving many refs in one git call gives what resolving each one gives; blobs and chart archives
are read and built once."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import threading
from pathlib import Path
from typing import Any

import pytest

from bot.charts.archive import chart_archive
from bot.git.repo import GitError, GitRepo
from tests.support.gitbuilder import GitBuilder
from tests.support.memos import ColdMemos


def test_resolve_many_matches_resolve(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init")
    g.run_git("tag", "-a", "-m", "annotated", "v1")
    repo = GitRepo(g.path)
    sha = repo.resolve("develop")
    assert sha is not None
    refs = ["develop", "v1", sha[:8], "HEAD^{tree}", "nope", "-x", "a b", "x\ny", "HEAD~1"]
    assert repo.resolve_many(refs) == {ref: repo.resolve(ref) for ref in refs}
    assert repo.resolve_many(refs)["v1"] == sha  # a tag names its commit


def test_names_the_long_lived_git_does_not_find_start_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The integration branch's candidates are asked every review, most of them absent.
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init")
    repo = GitRepo(g.path)
    sha = repo.resolve("develop")
    assert sha is not None
    runs: list[tuple[str, ...]] = []
    real = GitRepo._run

    def counted(self: GitRepo, *args: str, **kwargs: Any) -> Any:
        runs.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(GitRepo, "_run", counted)
    absent = ["main", "origin/main", "release/next"]
    assert repo.resolve_many(["develop", *absent]) == {"develop": sha, **dict.fromkeys(absent)}
    assert runs == []
    # What could be an abbreviated id is asked again of a new git: a long-lived one may expand
    # abbreviations from loose objects it listed before.
    assert repo.resolve_many(["beef"]) == {"beef": None}
    assert [args[0] for args in runs] == ["cat-file"]


def test_blobs_are_read_once_and_given_in_the_order_asked(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "A").write("b.txt", "B").commit("init")
    repo = GitRepo(g.path)
    tree = repo.listing(g.sha())
    a, b = tree["a.txt"].oid, tree["b.txt"].oid
    assert repo.blobs([b, a, b]) == [b"B", b"A", b"B"]
    repo.close()  # a blob read from git now would start a new cat-file
    assert (repo.blob(a), repo.blobs([a, b])) == (b"A", [b"A", b"B"])
    assert repo._batch is None


def test_an_archive_is_built_once_per_content(tmp_path: Path, cold_memos: ColdMemos) -> None:
    g = GitBuilder(tmp_path / "r").write("c/Chart.yaml", "name: c\n").write("c/x.txt", "x")
    first = g.commit("one").sha()
    second = g.write("other.txt", "elsewhere").commit("two").sha()
    repo = GitRepo(g.path)
    archive = chart_archive(repo, first, "c")
    assert chart_archive(repo, second, "c") is archive  # the chart's files did not change
    kept = chart_archive(repo, second, "c", lambda path: path != "x.txt")
    assert kept is not archive  # other files kept: another archive
    with tarfile.open(fileobj=io.BytesIO(kept), mode="r:gz") as tar:
        assert tar.getnames() == ["chart/Chart.yaml"]
    cold_memos()  # what a cold benchmark round has
    assert chart_archive(repo, second, "c") is not archive


def test_a_listing_read_through_cat_file_equals_ls_tree(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    g.write("Chart.yaml", "name: c\n").write("templates/a.yaml", "a: 1\n")
    g.write("templates/deep/ü nicode.yaml", "b: 2\n").write("run.sh", "#!/bin/sh\n")
    g.write("same/x.txt", "x").write("other/x.txt", "x").symlink("link", "Chart.yaml")
    (g.path / "run.sh").chmod(0o755)
    commit = g.commit("tree").sha()
    expected = {}
    for line in g.run_git("ls-tree", "-r", "-t", "-z", commit).split("\0"):
        if line:
            meta, _, name = line.partition("\t")
            mode, kind, oid = meta.split()
            expected[name] = (mode, kind, oid)
    listing = GitRepo(g.path).listing(commit)
    assert {p: (e.mode, e.kind, e.oid) for p, e in listing.items()} == expected


def test_an_archive_holds_what_tarfile_would_write(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("c/Chart.yaml", "name: c\n")
    g.write("c/templates/" + "long-name-" * 12 + ".yaml", "a: 1\n").write("c/ü.txt", "")
    g.write("c/big.bin", "z" * 70000).write("c/run.sh", "#!/bin/sh\n")
    (g.path / "c/run.sh").chmod(0o755)
    repo = GitRepo(g.path)
    archive = chart_archive(repo, g.commit("chart").sha(), "c")
    listing = {p: e for p, e in repo.listing("HEAD").items() if e.kind == "blob"}
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        members = {m.name: (m.size, m.mode, tar.extractfile(m).read()) for m in tar.getmembers()}  # type: ignore[union-attr]
    assert members == {
        f"chart/{p[2:]}": (
            len(data := repo.blob(e.oid)),
            0o755 if e.mode == "100755" else 0o644,
            data,
        )
        for p, e in listing.items()
    }


def test_read_many_reads_as_read_does_in_one_request(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    g.write("a.md", "# A\n").write("docs/b.md", "# B\n").write("docs/c.md", "# A\n")
    g.symlink("link.md", "a.md").commit("docs")
    tree = GitRepo(g.path).tree("develop")
    paths = ["docs/b.md", "missing.md", "a.md", "link.md", "docs", "docs/c.md"]
    # A symlink, a directory and a path that is not there read as None, as `read` has them.
    assert tree.read_many(paths) == [tree.read(p) for p in paths]
    assert tree.read_many(paths) == [b"# B\n", None, b"# A\n", None, None, b"# A\n"]
    assert tree.read_many([]) == []


def ls_tree(g: GitBuilder, commit: str) -> dict[str, tuple[str, str, str]]:
    expected = {}
    for line in g.run_git("ls-tree", "-r", "-t", "-z", commit).split("\0"):
        if line:
            meta, _, name = line.partition("\t")
            mode, kind, oid = meta.split()
            expected[name] = (mode, kind, oid)
    return expected


def test_listings_of_successive_commits_reuse_directories_and_equal_ls_tree(
    tmp_path: Path,
) -> None:
    """A listing reads only the directories no earlier listing had (unchanged ones have the same
    id); every listing still equals git's own, in what it holds and in its order."""
    g = GitBuilder(tmp_path / "r")
    for n in range(3):
        g.write(f"charts/c{n}/Chart.yaml", f"name: c{n}\n").write(f"charts/c{n}/t/a.yaml", "a\n")
    first = g.commit("one").sha()
    g.write("charts/c1/t/a.yaml", "changed\n").remove("charts/c2/t/a.yaml")
    g.write("charts/c2/new/b.yaml", "b\n")
    second = g.commit("two").sha()
    repo = GitRepo(g.path)
    asked: list[list[str]] = []
    read = repo._read_objects

    def counting(names: list[str], what: str) -> list[tuple[str, str, bytes]]:
        asked.append(list(names))
        return read(names, what)

    repo._read_objects = counting  # type: ignore[method-assign]
    for commit in (first, second):
        listing = repo.listing(commit)
        expected = ls_tree(g, commit)
        assert list(listing) == list(expected)
        assert {p: (e.mode, e.kind, e.oid) for p, e in listing.items()} == expected
    second_reads = [name.removesuffix("^{tree}") for names in asked[-4:] for name in names]
    unchanged = ls_tree(g, second)["charts/c0"][2]
    assert unchanged not in second_reads  # c0 was read for the first commit only
    assert ls_tree(g, second)["charts/c2/new"][2] in second_reads


def test_two_commits_of_one_tree_share_their_listing(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a/b.txt", "x").commit("one")
    tree = g.run_git("rev-parse", "HEAD^{tree}").strip()
    other = g.run_git("commit-tree", tree, "-m", "a squash merge of the same files").strip()
    repo = GitRepo(g.path)
    assert repo.listing(other) is repo.listing(g.sha())


def test_paths_under_a_directory_are_the_sorted_files_below_it(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    for path in ("a/x", "a/b/y", "a-b/z", "a.b/w", "ab/v", "a/c/d/u", "b"):
        g.write(path, path)
    tree = GitRepo(g.path).tree(g.commit("files").sha())
    assert tree.paths("a") == ("a/b/y", "a/c/d/u", "a/x")
    assert tree.paths("a/") == tree.paths("a")
    assert tree.paths("a/c") == ("a/c/d/u",)
    assert tree.paths("nothing") == ()
    assert (
        tree.paths("")
        == tree.paths(".")
        == tuple(sorted(("a/x", "a/b/y", "a-b/z", "a.b/w", "ab/v", "a/c/d/u", "b")))
    )


def _counting_reads(repo: GitRepo) -> list[str]:
    """The object names `repo` asks its `cat-file` for from now on, tree suffixes dropped."""
    asked: list[str] = []
    read = repo._read_objects

    def counting(names: list[str], what: str = "") -> list[tuple[str, str, bytes]]:
        asked.extend(name.removesuffix("^{tree}") for name in names)
        return read(names, what)

    repo._read_objects = counting  # type: ignore[method-assign]
    return asked


def test_a_tree_answers_every_path_as_the_whole_listing_does(tmp_path: Path) -> None:
    """Lookups walk directories instead of listing the commit: the same entry for every path git
    lists, none for paths it does not, and the same files under every directory."""
    g = GitBuilder(tmp_path / "r")
    for path in ("a/x", "a/b/y", "a-b/z", "a.b/w", "ab/v", "a/c/d/u", "b", "charts/c/t/s.yaml"):
        g.write(path, path)
    commit = g.commit("files").sha()
    expected = ls_tree(g, commit)
    tree = GitRepo(g.path).tree(commit)
    for path, (mode, kind, oid) in expected.items():
        entry = tree.entry(path)
        assert entry is not None and (entry.mode, entry.kind, entry.oid) == (mode, kind, oid)
    for absent in ("", "/", "/a", "a/", "a//b", "./a", "a/./x", "a/x/y", "nothing", "a/nothing"):
        assert tree.entry(absent) is None, absent
    files = sorted(p for p, (_, kind, _) in expected.items() if kind != "tree")
    for directory in (p for p, (_, kind, _) in expected.items() if kind == "tree"):
        assert tree.paths(directory) == tuple(p for p in files if p.startswith(directory + "/"))
    assert tree.read("a/b/y") == b"a/b/y" and tree.read("a/b") is None
    assert tree.tree_id("") == g.run_git("rev-parse", f"{commit}^{{tree}}").strip()


def test_a_directory_of_a_large_tree_is_read_without_the_rest(tmp_path: Path) -> None:
    """What the duplicates check reads of another PR's head: one chart directory, its files and
    archive, reading the trees on the way there and below it, not the other directories."""
    g = GitBuilder(tmp_path / "r")
    for n in range(20):
        g.write(f"docs/d{n}/page.md", f"# {n}\n")
    g.write("charts/app/Chart.yaml", "name: app\nversion: 1.0.0\n")
    g.write("charts/app/templates/cm.yaml", "kind: ConfigMap\n")
    g.write("charts/other/Chart.yaml", "name: other\n")
    commit = g.commit("files").sha()
    repo = GitRepo(g.path)
    asked = _counting_reads(repo)
    tree = repo.tree(commit)
    assert tree.paths("charts/app") == ("charts/app/Chart.yaml", "charts/app/templates/cm.yaml")
    assert tree.text("charts/app/Chart.yaml") == "name: app\nversion: 1.0.0\n"
    chart_archive(repo, commit, "charts/app")
    ids = ls_tree(g, commit)
    unread = [ids[d][2] for d in ("docs", "docs/d0", "charts/other")]
    assert not set(unread) & set(asked)
    assert ids["charts/app/templates"][2] in asked


def test_a_directory_at_many_commits_is_the_tree_ls_tree_names_or_none(tmp_path: Path) -> None:
    """What the claims and the duplicates check ask of hundreds of PRs' commits: a chart
    directory's tree id, git walking the path; None where the path is no directory at that
    commit (absent, a file, a symlink), and for paths no tree entry can name."""
    g = GitBuilder(tmp_path / "r")
    g.write("charts/app/Chart.yaml", "name: app\n").write("charts/file", "x")
    g.write("dir with space/sub/f", "y").symlink("charts/link", "app")
    first = g.commit("one").sha()
    second = g.write("charts/app/values.yaml", "a: 1\n").commit("two").sha()
    g.run_git("rm", "-rq", "charts/app")
    third = g.commit("three").sha()
    repo = GitRepo(g.path)
    commits = [first, second, third, first, "0" * 40]
    ids = {c: ls_tree(g, c) for c in (first, second, third)}

    def expected(directory: str) -> list[str | None]:
        found = [ids[c].get(directory) if c in ids else None for c in commits]
        return [entry[2] if entry is not None and entry[1] == "tree" else None for entry in found]

    for directory in ("charts/app", "charts", "dir with space/sub", "charts/file", "charts/link"):
        assert repo.directory_trees(commits, directory) == expected(directory), directory
        assert repo.directory_trees(commits, directory + "/") == expected(directory)
    assert repo.directory_trees(commits, "charts/app")[2] is None  # removed at the third
    for odd in ("", ".", "./charts", "charts//app", "charts/../charts", "charts/app\n"):
        assert repo.directory_trees(commits, odd) == [None] * len(commits), odd


def test_the_directories_holding_a_file_are_those_its_paths_name(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("Chart.yaml", "name: root\n")
    g.write("charts/a/Chart.yaml", "name: a\n").write("charts/a/charts/sub/Chart.yaml", "n: s\n")
    g.write("same/Chart.yaml", "name: a\n").write("copy/Chart.yaml", "name: a\n")  # one tree id
    g.write("docs/Chart.yaml/README.md", "a directory of that name\n").write("x y/Chart.yaml", "")
    g.symlink("linked/Chart.yaml", "../Chart.yaml")
    first = g.commit("charts").sha()
    second = g.write("charts/b/Chart.yaml", "name: b\n").remove("copy/Chart.yaml").commit("b").sha()
    repo = GitRepo(g.path)
    for commit in (first, second):
        files = repo.tree(commit).paths()
        named = sorted({p.rpartition("/")[0] or "." for p in files if p.endswith("Chart.yaml")})
        named = [d for d in named if d == "." or f"{d}/Chart.yaml" in files]
        assert repo.tree(commit).dirs_with("Chart.yaml") == tuple(named)
    assert repo.tree(second).dirs_with("Chart.yaml") == (
        ".", "charts/a", "charts/a/charts/sub", "charts/b", "linked", "same", "x y",
    )  # fmt: skip


def test_a_tree_naming_one_subtree_many_times_is_refused_not_walked_path_by_path(
    tmp_path: Path,
) -> None:
    # Ten names for one tree, six levels down: a million directories holding a Chart.yaml in a
    # repository of a few objects. git's own `ls-tree -r` would list every one.
    g = GitBuilder(tmp_path / "r").write("Chart.yaml", "name: c\n").commit("leaf")
    tree = g.run_git("rev-parse", "HEAD^{tree}").strip()
    for _ in range(6):
        lines = "".join(f"040000 tree {tree}\td{i}\n" for i in range(10))
        tree = subprocess.run(
            ["git", "-C", str(g.path), "mktree"], input=lines, capture_output=True, text=True
        ).stdout.strip()
    repo = GitRepo(g.path)
    with pytest.raises(GitError, match="more than 100,000 directories hold a Chart.yaml"):
        repo.dirs_holding(tree, "Chart.yaml")
    with pytest.raises(GitError, match="more than 500,000 entries; not listed"):
        repo.tree_listing(tree)  # what the headings check lists: refused, not filling the memory


def _fork_log_case(tmp_path: Path) -> GitBuilder:
    """develop: T0 → T1 → T2. `simple`: two commits on T1. `synced`: C1 on T0, then develop's T1
    merged in, then C2: its boundary is T0 and T1, and the merge base T1."""
    g = GitBuilder(tmp_path / "r").write("a.txt", "0").commit("T0").tag("T0")
    g.write("a.txt", "1").commit("T1").tag("T1")
    g.branch("simple").write("s.txt", "1").commit("S1").write("s.txt", "2").commit("S2")
    g.branch("synced", "T0").write("c.txt", "1").commit("C1").merge("T1")
    g.write("c.txt", "2").commit("C2")
    g.checkout("develop").write("a.txt", "2").commit("T2")
    return g


def test_fork_log_gives_the_commits_and_the_merge_base_git_names(tmp_path: Path) -> None:
    g = _fork_log_case(tmp_path)
    repo = GitRepo(g.path)
    target, head = g.sha("develop"), g.sha("simple")
    commits, merge_base = repo.fork_log(target, head, max_count=250)
    assert merge_base == repo.merge_base(target, head) == g.sha("T1")
    assert commits == repo.log(f"{merge_base}..{head}", max_count=250)
    assert [c.subject for c in commits] == ["S2", "S1"]
    assert commits[0].sha == head


def test_fork_log_leaves_the_merge_base_to_git_where_the_boundary_is_not_one_commit(
    tmp_path: Path,
) -> None:
    g = _fork_log_case(tmp_path)
    repo = GitRepo(g.path)
    target, synced = g.sha("develop"), g.sha("synced")
    commits, merge_base = repo.fork_log(target, synced, max_count=250)
    assert merge_base is None  # T0 and T1 bound it; git says T1
    assert repo.merge_base(target, synced) == g.sha("T1")
    assert {c.subject for c in commits} == {"C2", "Merge T1", "C1"}
    # Cut at max_count, the commit past the cut would read as the boundary: not taken for it.
    commits, merge_base = repo.fork_log(target, g.sha("simple"), max_count=1)
    assert [c.subject for c in commits] == ["S2"] and merge_base is None


def test_fork_log_of_a_head_already_in_the_target_is_that_head(tmp_path: Path) -> None:
    g = _fork_log_case(tmp_path)
    repo = GitRepo(g.path)
    t1 = g.sha("T1")
    assert repo.fork_log(g.sha("develop"), t1, max_count=250) == ((), t1)
    assert repo.merge_base(g.sha("develop"), t1) == t1


def test_the_paths_between_two_trees_are_what_either_holds_differently(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").write("d/b.txt", "y").write("c.txt", "z")
    first = g.commit("init").sha()
    g.write("a.txt", "x2").remove("c.txt").run_git("mv", "d/b.txt", "b.txt")
    second = g.write("new é.txt", "n").commit("change").sha()
    repo = GitRepo(g.path)
    one, two = repo.root_tree(first), repo.root_tree(second)
    assert one is not None and two is not None
    changed = {"a.txt", "c.txt", "d/b.txt", "b.txt", "new é.txt"}  # a move: both its paths
    assert repo.paths_between(one, two) == changed == repo.paths_between(first, second)
    assert repo.tree(second).paths_changed_from(one) == changed
    assert repo.paths_between(one, one) == frozenset()
    assert repo.paths_between("0" * 40, two) is None  # no such object here
    repo.close()


def test_tagged_names_the_tags_among_the_names_even_ones_made_since(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init").tag("v1.0.0")
    g.run_git("tag", "-a", "-m", "annotated", "app-1.0.0")
    repo = GitRepo(g.path)
    wanted = ["v1.0.0", "1.0.0", "app-1.0.0", "develop", "v1.0.0^{}", "HEAD", "a b", "x\ny"]
    assert repo.tagged(wanted) == ("v1.0.0", "app-1.0.0")
    g.tag("1.0.0")  # after the long-lived cat-file started
    g.run_git("pack-refs", "--all")
    g.tag("2.0.0")
    assert repo.tagged([*wanted, "2.0.0"]) == ("v1.0.0", "1.0.0", "app-1.0.0", "2.0.0")


def _children() -> set[str]:
    """This thread's child processes not yet reaped (a finished but unreaped one included)."""
    children = Path(f"/proc/{os.getpid()}/task/{threading.get_native_id()}/children")
    return set(children.read_text().split())


def test_commits_are_the_log_and_a_reader_that_stops_stops_git(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("c/Chart.yaml", "v: 0\n").commit("first")
    for n in range(1, 30):
        g.write("c/Chart.yaml", f"v: {n}\n").write("other.txt", f"{n}\n").commit(f"bump {n}")
        g.write("other.txt", f"x{n}\n").commit(f"other {n}")
    repo = GitRepo(g.path)
    develop = g.sha("develop")
    assert tuple(repo.commits(develop, "c/Chart.yaml", 200)) == repo.log(develop, "c/Chart.yaml")
    assert len(repo.log(develop, "c/Chart.yaml")) == 30
    assert [c.subject for c in repo.log(develop, max_count=3)] == [
        "other 29",
        "bump 29",
        "other 28",
    ]
    before = _children()
    newest = repo.commits(develop, "c/Chart.yaml", 200)
    assert next(newest).subject == "bump 29"
    assert len(_children() - before) == 1  # git, writing or done
    del newest  # what a caller's loop does when it breaks
    assert _children() == before


def test_commits_name_git_s_reason_when_the_range_is_bad(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init")
    with pytest.raises(GitError, match="git log failed: .*nope"):
        list(GitRepo(g.path).commits("nope..develop"))


def test_a_first_parent_line_asked_by_commit_id_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "0").commit("first (#1)")
    g.branch("side").write("b.txt", "1").commit("on the side").checkout("develop")
    g.write("a.txt", "1").commit("second").merge("side", "Merge pull request #2")
    repo = GitRepo(g.path)
    runs: list[tuple[str, ...]] = []
    real = GitRepo._run

    def counted(self: GitRepo, *args: str, **kwargs: Any) -> Any:
        runs.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(GitRepo, "_run", counted)
    tip = g.sha("develop")
    assert repo.first_parent_subjects(tip, 10) == ("Merge pull request #2", "second", "first (#1)")
    line = [tip, g.sha("develop^"), g.sha("develop~2")]
    assert [sha for sha, _ in repo.first_parent_line(tip, 10)] == line
    assert len(runs) == 1
    repo.first_parent_line("develop", 10)  # a branch moves: asked by name, read each time
    repo.first_parent_line("develop", 10)
    assert len(runs) == 3
    side = g.sha("side")
    wanted = {line[2], line[1], side}
    assert repo.first_parent_positions(tip, wanted, 10) == {line[1]: 1, line[2]: 2}
    assert repo.first_parent_positions("develop", wanted, 10) == {line[1]: 1, line[2]: 2}
    assert repo.first_parent_positions("develop", wanted, 2) == {line[1]: 1}
    assert len(runs) == 3  # the remembered line, or rev-list read as git writes it


def test_first_parent_positions_stop_git_at_the_oldest_wanted(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "0").commit("c0")
    for n in range(1, 400):
        g.write("a.txt", f"{n}").commit(f"c{n}")
    repo = GitRepo(g.path)
    wanted = {g.sha("develop~3"), g.sha("develop~1")}
    before = _children()
    assert repo.first_parent_positions("develop", wanted, 5000) == {
        g.sha("develop~1"): 1,
        g.sha("develop~3"): 3,
    }
    assert _children() == before  # git stopped and reaped, its list unread


def test_a_subject_holding_a_line_separator_is_one_commits(tmp_path: Path) -> None:
    """git ends each line of its output with `\\n` alone: a subject holding U+2028 (or NEL) is one
    subject, not a second line forging a commit whose subject says a PR merged."""
    g = GitBuilder(tmp_path / "r").write("a.txt", "1").commit("init")
    forged = "fix\u2028" + "0" * 40 + " Merge pull request #12 from x\x85y"
    tip = g.write("a.txt", "2").commit(forged).sha()
    line = GitRepo(g.path).first_parent_line(tip, 10)
    assert [subject for _, subject in line] == [forged, "init"]
    assert line[0][0] == tip
