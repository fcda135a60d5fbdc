"""The head as it would be once a suggested change is committed: one file's text replaced, held in
memory (nothing is written to the repository), readable by the render machinery as any commit is.

The render cache and the archive cache key by object ids, so the patched file gets its own blob id
(git's own hash of the new text) and every directory above it an id derived from its old one and
that blob's: a patched chart never answers as the unpatched one, and the same patch twice is the
same render."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

from bot.git.history import LogEntry
from bot.git.objects import Commit
from bot.git.revisions import Revisions
from bot.git.tree import TREE_MODE, Entry, GitTree, Level, TreeObjects

BLOB_MODE = "100644"


class PatchedRepo(Revisions):
    """`repo`, except that at `commit` the file `path` holds `data`: the patched commit's tree and
    the directories above the file are tree objects made here (the rest of the tree is the
    commit's own), and the file's blob is `data`. Every other query runs on the same repository,
    unpatched. Made by `GitRepo.patched`, which the engine asks through its `GitReader`
    (bot/git/objects.py). A `Revisions`, as `GitRepo` is, rather than a `GitRepo`: that one makes
    this, and a subclass would import it back; the walks over trees and blobs it inherits read
    through the overrides here."""

    def __init__(self, repo: Revisions, commit: str, path: str, data: bytes) -> None:
        # Its own cat-file process, started only if a query needs it; history is asked of `repo`,
        # whose answers (remembered there) the patch cannot change.
        super().__init__(repo.path)
        self._inner = repo
        self._commit, self._data = commit, data
        root = repo.root_tree(commit)
        if root is None:
            raise ValueError(f"{commit}: no such commit to patch")
        old = repo.tree(commit).entry(path)
        self._oid = blob_id(data, len(root))
        self._root, self._made = patched_levels(
            repo, root, path, Entry(old.mode if old is not None else BLOB_MODE, "blob", self._oid)
        )

    def patched(self, commit: str, path: str, data: bytes) -> PatchedRepo:
        """This patched repository with one more file replaced."""
        return PatchedRepo(self, commit, path, data)

    # -- history: the repository's own, remembered there ------------------------------------------

    def merge_conflicts(self, ours: str, theirs: str) -> tuple[str, ...]:
        return self._inner.merge_conflicts(ours, theirs)

    def merge_changes(self, ours: str, theirs: str, path: str) -> bool:
        return self._inner.merge_changes(ours, theirs, path)

    def commits(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> Iterator[Commit]:
        return self._inner.commits(rev_range, path, max_count)

    def tagged(self, names: Sequence[str]) -> tuple[str, ...]:
        return self._inner.tagged(names)

    def resolve_many(self, refs: list[str]) -> dict[str, str | None]:
        return self._inner.resolve_many(refs)

    def first_parent_line(self, rev: str, max_count: int) -> tuple[tuple[str, str], ...]:
        return self._inner.first_parent_line(rev, max_count)

    def first_parent_log(
        self, rev: str, since: int | None = None, max_count: int | None = None
    ) -> list[LogEntry]:
        return self._inner.first_parent_log(rev, since, max_count)

    def first_parent_changes(self, rev: str, depth: int, path: str) -> list[LogEntry]:
        return self._inner.first_parent_changes(rev, depth, path)

    # -- the patched trees -------------------------------------------------------------------------

    def head(self) -> GitTree:
        """The patched commit's tree (same commit id: git queries about the head still work)."""
        return GitTree(self, self._commit)

    def root_tree(self, commit: str) -> str | None:
        return self._root if commit == self._commit else self._inner.root_tree(commit)

    def levels(self, trees: list[str]) -> list[Level]:
        others = [t for t in trees if t not in self._made]
        found = dict(zip(others, self._inner.levels(others), strict=True)) if others else {}
        return [self._made.get(t) or found[t] for t in trees]

    def tree_listing(self, tree: str) -> dict[str, Entry]:
        # Trees of the repository's own: its listing, remembered there across reviews.
        return super().tree_listing(tree) if tree in self._made else self._inner.tree_listing(tree)

    def file_paths_under(self, tree: str, lead: str = "") -> tuple[str, ...]:
        if tree in self._made:
            return super().file_paths_under(tree, lead)
        return self._inner.file_paths_under(tree, lead)

    def blobs(self, oids: list[str]) -> list[bytes]:
        others = [oid for oid in oids if oid != self._oid]
        found = dict(zip(others, self._inner.blobs(others), strict=True)) if others else {}
        return [self._data if oid == self._oid else found[oid] for oid in oids]


def patched_levels(
    repo: TreeObjects, root: str, path: str, file: Entry
) -> tuple[str, dict[str, Level]]:
    """The tree objects of `root` with `path` pointing at `file`: the new root's id, and each new
    tree (the root and every directory above the file, a missing one made) by its id."""
    *dirs, name = path.split("/")
    chain: list[tuple[str, Level]] = [(root, repo.level(root))]  # each directory, root first
    for part in dirs:
        entry = chain[-1][1].get(part)
        tree = entry.oid if entry is not None and entry.kind == "tree" else ""
        chain.append((tree, repo.level(tree) if tree else {}))
    made: dict[str, Level] = {}
    child, child_name = file, name
    for depth in range(len(chain) - 1, -1, -1):
        tree, level = chain[depth]
        # A directory the file is the first of is named by its path, so no two share an id.
        seed = tree or derived_id(root, "/".join(dirs[:depth]))
        new_id = derived_id(seed, file.oid)
        made[new_id] = _git_order({**level, child_name: child})
        child = Entry(TREE_MODE, "tree", new_id)
        child_name = dirs[depth - 1] if depth else ""
    return child.oid, made


def _git_order(level: Level) -> Level:
    """Entries in the order git writes a tree: by name, a directory's name read as ending in `/`."""
    return dict(
        sorted(level.items(), key=lambda item: item[0] + ("/" if item[1].kind == "tree" else ""))
    )


def blob_id(data: bytes, width: int = 40) -> str:
    """git's object id of a blob holding `data` (SHA-1, or SHA-256 in a repository of 64-digit ids)."""
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def derived_id(old: str, patched_blob: str) -> str:
    """An id for a directory whose content changed by one blob: never a real tree's, stable for the
    same patch, as wide as git's."""
    digest = hashlib.sha256 if len(old) == 64 else hashlib.sha1
    return digest(f"patched {old} {patched_blob}".encode()).hexdigest()
