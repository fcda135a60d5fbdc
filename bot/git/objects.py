"""Values and read-only views of git that the engine and the checks read: a tree at a commit, a
commit, a changed file, the git queries a check may make (`GitView`) and the reads the engine and
the chart pipeline make of a repository (`GitReader`). The adapter in `bot/git/repo.py` provides
them; nothing here runs git."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from bot.git.tree import Entry, GitTree, TreeObjects

# Named in signatures only: their modules keep process-wide caches, of no use to a check.
if TYPE_CHECKING:
    from bot.git.fork_points import ForkPoint
    from bot.git.subtree import Subtree

# A full commit (or object) id, SHA-1 or SHA-256: a name whose history never changes, unlike a ref's.
OBJECT_ID_RE = re.compile("[0-9a-f]{40}|[0-9a-f]{64}")


class Tree(Protocol):
    """The files of a repository at one commit."""

    @property
    def commit(self) -> str: ...

    def read(self, path: str) -> bytes | None:
        """The blob at `path`, or None when there is none."""
        ...

    def text(self, path: str) -> str | None:
        """The blob at `path` decoded as UTF-8 (undecodable bytes replaced), or None."""
        ...

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        """Every file path under `prefix` (a directory; "" for the whole tree), sorted."""
        ...

    def is_file(self, path: str) -> bool:
        """Whether `paths()` lists `path`, asked without listing the tree."""
        ...

    def dirs_with(self, name: str) -> tuple[str, ...]:
        """The directories holding a file named `name` ("." for the root), sorted."""
        ...


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    message: str = ""


@dataclass(frozen=True)
class ChangedFile:
    """A file the PR changed, against the merge base (three-dot), with the line numbers it added at
    head and removed at base: what a reviewer sees in GitHub's diff."""

    path: str
    status: str  # A, M, D, R (renamed: old_path set)
    old_path: str | None = None
    added_lines: frozenset[int] = frozenset()
    removed_lines: frozenset[int] = frozenset()


class GitView(Protocol):
    """Read-only git queries a check may need beyond the trees (merge simulation, tags, history)."""

    def tree(self, commit: str) -> Tree: ...

    def resolve(self, ref: str) -> str | None: ...

    def merge_base(self, a: str, b: str) -> str | None: ...

    def is_ancestor(self, ancestor: str, descendant: str) -> bool: ...

    def merge_conflicts(self, ours: str, theirs: str) -> tuple[str, ...]:
        """Paths that would conflict if `theirs` were merged into `ours` (`git merge-tree`)."""
        ...

    def merge_changes(self, ours: str, theirs: str, path: str) -> bool:
        """Whether merging `theirs` into `ours` changes anything under the directory `path`."""
        ...

    def tagged(self, names: Sequence[str]) -> tuple[str, ...]:
        """Those of `names` that are tags."""
        ...

    def log(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> tuple[Commit, ...]:
        """Commits newest first, optionally only those touching `path`."""
        ...

    def commits(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> Iterator[Commit]:
        """`log` as git writes it; git stops when the caller drops the iterator."""
        ...


@runtime_checkable
class GitReader(GitView, TreeObjects, Protocol):
    """What the engine and the chart pipeline read of a repository (`GitRepo` is one): the views
    of its files (`TreeObjects`), a check's queries (`GitView`, handed on as the context's git),
    and the review's own reads of refs and history. The engine is handed one at its door and
    imports no git process (chart-testing's engine takes its `Git` interface the same way)."""

    @property
    def path(self) -> Path: ...

    def tree(self, commit: str) -> GitTree: ...

    def resolve_many(self, refs: list[str]) -> dict[str, str | None]:
        """`resolve` of several refs: ref → commit id, or None."""
        ...

    def default_branch(self) -> str | None: ...

    def shallow_commits(self) -> frozenset[str]: ...

    def fork_log(
        self, target: str, head: str, max_count: int
    ) -> tuple[tuple[Commit, ...], str | None]:
        """The commits `head` adds to `target` and their merge base, if the log says it surely."""
        ...

    def fork_points(self, develop: str, heads: Sequence[str]) -> dict[str, ForkPoint]: ...

    def changes(self, a: str, b: str) -> tuple[ChangedFile, ...]: ...

    def changes_from_merge_base(self, a: str, b: str) -> tuple[ChangedFile, ...] | None: ...

    def subtrees(
        self, directory: str, commits: Sequence[str], read: Sequence[str] = ()
    ) -> dict[str, Subtree]: ...

    def listing_under(self, commit: str, directory: str) -> dict[str, Entry]: ...

    def patched(self, commit: str, path: str, data: bytes) -> PatchedReader:
        """This repository with the file `path` at `commit` holding `data`, held in memory."""
        ...


@runtime_checkable
class PatchedReader(GitReader, Protocol):
    """A repository whose head has one file replaced (a suggested change, committed in memory):
    what the engine renders a suggestion on, and closes once it has."""

    def head(self) -> GitTree: ...

    def close(self) -> None: ...
