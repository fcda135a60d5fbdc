"""The head as a suggested change would commit it, held in memory (bot/git/patched.py): listed as
git would list the commit of the patch, its history asked of the repository it patches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.git.patched import PatchedRepo
from bot.git.process import GitProcess
from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder


def test_a_patched_head_lists_as_the_commit_of_the_patch_would(tmp_path: Path) -> None:
    """The patched tree made in memory holds what git would commit (paths, modes, blob ids, in
    git's order), a file in a directory that did not exist included; trees above the file get
    ids of their own, and the rest of the tree is the commit's."""
    g = GitBuilder(tmp_path / "r")
    g.write("charts/app/values.yaml", "a: 1\n").write("charts/app/zz/t.yaml", "t\n")
    g.write("docs/readme.md", "# r\n")
    base = g.commit("base").sha()
    repo = GitRepo(g.path)
    for path in ("charts/app/values.yaml", "charts/app/new/deeper/x.yaml", "charts/app/m"):
        patched = PatchedRepo(repo, base, path, b"patched: true\n")
        listing = patched.listing(base)
        g.run_git("checkout", "-q", "--detach", base)
        g.write(path, "patched: true\n")
        real = GitRepo(g.path).listing(g.commit(f"patch {path}").sha())
        assert list(listing) == list(real)
        for name, entry in real.items():
            mine = listing[name]
            assert (mine.mode, mine.kind) == (entry.mode, entry.kind)
            above = entry.kind == "tree" and path.startswith(name + "/")
            assert (mine.oid == entry.oid) == (not above)
        assert patched.head().read(path) == b"patched: true\n"
        assert patched.head().paths("docs") == ("docs/readme.md",)
        assert repo.tree(base).read(path) != b"patched: true\n"  # the repository is untouched


def test_a_patched_head_asks_its_history_of_the_repository_it_patches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A suggestion's proof re-runs the version check, which asks merge-tree, the chart's history
    # and the tags again: answers the patch cannot change, remembered by the repository.
    g = GitBuilder(tmp_path / "r").write("c/Chart.yaml", "version: 1.0.0\n").commit("c 1.0.0")
    g.tag("v1.0.0").branch("pr").write("c/Chart.yaml", "version: 1.0.1\n").commit("bump")
    develop, head = g.sha("develop"), g.sha("pr")
    repo = GitRepo(g.path)
    runs: list[tuple[str, ...]] = []
    real = GitProcess._run

    def counted(self: GitProcess, *args: str, **kwargs: Any) -> Any:
        runs.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(GitProcess, "_run", counted)
    asked = (repo.merge_conflicts(develop, head), list(repo.commits(develop, "c/Chart.yaml")))
    assert runs == [("merge-tree", "--write-tree", "--name-only", "--no-messages", develop, head)]
    patched = PatchedRepo(repo, head, "c/values.yaml", b"a: 1\n")
    assert (
        patched.merge_conflicts(develop, head),
        list(patched.commits(develop, "c/Chart.yaml")),
    ) == asked
    assert asked[0] == () and [c.subject for c in asked[1]] == ["c 1.0.0"]
    assert patched.tagged(["v1.0.0", "1.0.0"]) == ("v1.0.0",)
    assert len(runs) == 1  # no new process to check the path, no merge-tree again


def test_a_patch_of_a_patched_head_holds_both_files(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("c/values.yaml", "a: 1\n").write("c/b.yaml", "b\n")
    head = g.commit("init").sha()
    once = GitRepo(g.path).patched(head, "c/values.yaml", b"a: 2\n")
    twice = once.patched(head, "c/b.yaml", b"b: 2\n")
    assert twice.head().read("c/values.yaml") == b"a: 2\n"
    assert twice.head().read("c/b.yaml") == b"b: 2\n"
    assert twice.head().paths("c") == ("c/b.yaml", "c/values.yaml")
    assert once.head().read("c/b.yaml") == b"b\n"
