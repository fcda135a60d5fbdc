"""git objects at any commit, read without touching a work tree (bare or not): `GitRepo`, the one
name every caller imports.

`GitRepo` is a facade over three modules, one role each: running git (bot/git/process.py: commands,
the long-lived `cat-file`, `GitError`), the files at a commit (bot/git/listings.py: trees, levels,
listings, blobs) and refs and history (bot/git/revisions.py: logs, merge bases, tags, merges). They
are stacked by inheritance, `Revisions(Listings(GitProcess))`, not held as parts: a view that
overrides how tree objects or blobs are read (bot/git/patched.py's patched head) must have every
walk over them (listings, `dirs_holding`, a merge's trees) read through its override, which calls
through `self` give and delegation to parts would not. What the layers above read of it is declared
as protocols in bot/git/objects.py."""

from __future__ import annotations

import os

from bot.git.patched import PatchedRepo
from bot.git.process import GitError, close_all
from bot.git.revisions import GIT_DATES_END, Revisions

__all__ = ["GIT_DATES_END", "GitError", "GitRepo", "close_all"]


class GitRepo(Revisions):
    """One repository on disk. Thread-safe for reads."""

    def __init__(self, path: str | os.PathLike[str], *, checked: bool = False) -> None:
        """`checked`: the path is known to be a repository (another GitRepo's), not asked again."""
        super().__init__(path)
        if not checked and self._run("rev-parse", "--git-dir", check=False).returncode != 0:
            raise GitError(f"{self.path}: not a git repository")

    def patched(self, commit: str, path: str, data: bytes) -> PatchedRepo:
        """This repository with the file `path` at `commit` holding `data`, held in memory (a
        suggested change, committed as GitHub's "Commit suggestion" would): bot/git/patched.py."""
        return PatchedRepo(self, commit, path, data)
