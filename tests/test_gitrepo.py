"""Resolving many refs in one git call gives what resolving each one gives."""

from __future__ import annotations

from pathlib import Path

from bot.gitrepo import GitRepo
from tests.gitbuilder import GitBuilder


def test_resolve_many_matches_resolve(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init")
    g.run_git("tag", "-a", "-m", "annotated", "v1")
    repo = GitRepo(g.path)
    sha = repo.resolve("develop")
    assert sha is not None
    refs = ["develop", "v1", sha[:8], "HEAD^{tree}", "nope", "-x", "a b", "x\ny", "HEAD~1"]
    assert repo.resolve_many(refs) == {ref: repo.resolve(ref) for ref in refs}
    assert repo.resolve_many(refs)["v1"] == sha  # a tag names its commit
