"""The ports of bot/git/objects.py: `GitRepo` is the `GitReader` the engine is handed, member for
member, and what it patches is the `PatchedReader` a suggestion is rendered on."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Protocol

from bot.git.objects import GitReader, PatchedReader
from bot.git.patched import PatchedRepo
from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder


def members(protocol: type) -> set[str]:
    """The public members a protocol declares, its own and those of the protocols it extends."""
    declared = (c for c in protocol.__mro__ if Protocol in c.__bases__ or c is protocol)
    return {name for c in declared for name in vars(c) if not name.startswith("_")}


def test_members_lists_what_a_protocol_and_its_bases_declare() -> None:
    assert {"tree", "resolve", "root_tree", "subtrees", "patched", "path"} <= members(GitReader)
    assert members(PatchedReader) == members(GitReader) | {"head", "close"}


def test_a_repository_is_the_reader_the_engine_is_handed(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("a.txt", "x").commit("init")
    repo = GitRepo(g.path)
    assert isinstance(repo, GitReader)
    for name in members(GitReader) - {"path"}:
        # The same parameters, named alike: a caller passing them by name reaches the adapter.
        declared = inspect.signature(getattr(GitReader, name)).parameters
        offered = inspect.signature(getattr(GitRepo, name)).parameters
        assert list(declared) == list(offered), name
        assert [p.default for p in declared.values()] == [p.default for p in offered.values()]


def test_a_patched_repository_is_the_patched_reader(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r").write("c/values.yaml", "a: 1\n").commit("init")
    repo = GitRepo(g.path)
    patched = repo.patched(g.sha(), "c/values.yaml", b"a: 2\n")
    assert isinstance(patched, PatchedRepo) and isinstance(patched, PatchedReader)
    assert patched.head().read("c/values.yaml") == b"a: 2\n"
    assert repo.tree(g.sha()).read("c/values.yaml") == b"a: 1\n"
    patched.close()
