"""The head as it would be once a suggested change is committed: one file's text replaced, held in
memory (nothing is written to the repository), readable by the render machinery as any commit is.

The render cache and the archive cache key by object ids, so the patched file gets its own blob id
(git's own hash of the new text) and every directory above it an id derived from its old one and
that blob's: a patched chart never answers as the unpatched one, and the same patch twice is the
same render."""

from __future__ import annotations

import hashlib

from bot.git.repo import Entry, GitRepo, GitTree

BLOB_MODE = "100644"


class PatchedRepo(GitRepo):
    """`repo`, except that at `commit` the file `path` holds `data`. Only the reads the render
    path makes (listing, blobs, object ids) are answered from the patch; every other query runs on
    the same repository, unpatched."""

    def __init__(self, repo: GitRepo, commit: str, path: str, data: bytes) -> None:
        super().__init__(repo.path)  # its own cat-file process, started only if a query needs it
        self._inner = repo
        self._commit, self._path, self._data = commit, path, data
        old = repo.listing(commit).get(path)
        self._oid = blob_id(data, len(old.oid) if old is not None else 40)
        self._patched: dict[str, Entry] | None = None

    def head(self) -> GitTree:
        """The patched commit's tree (same commit id: git queries about the head still work)."""
        return GitTree(self, self._commit)

    def listing(self, commit: str) -> dict[str, Entry]:
        if commit != self._commit:
            return self._inner.listing(commit)
        if self._patched is None:
            self._patched = patched_listing(self._inner.listing(commit), self._path, self._oid)
        return self._patched

    def blobs(self, oids: list[str]) -> list[bytes]:
        others = [oid for oid in oids if oid != self._oid]
        found = dict(zip(others, self._inner.blobs(others), strict=True)) if others else {}
        return [self._data if oid == self._oid else found[oid] for oid in oids]

    def object_id(self, commit: str, path: str) -> str | None:
        if commit != self._commit:
            return self._inner.object_id(commit, path)
        if path:
            entry = self.listing(commit).get(path)
            return entry.oid if entry is not None else None
        root = self._inner.object_id(commit, "") or ""
        return derived_id(root, self._oid)


def patched_listing(listing: dict[str, Entry], path: str, oid: str) -> dict[str, Entry]:
    """`listing` with `path` pointing at blob `oid`, and each directory above it at a new id."""
    out = dict(listing)
    old = listing.get(path)
    out[path] = Entry(old.mode if old is not None else BLOB_MODE, "blob", oid)
    parts = path.split("/")
    for depth in range(1, len(parts)):
        directory = "/".join(parts[:depth])
        entry = listing.get(directory)
        if entry is not None:
            out[directory] = Entry(entry.mode, entry.kind, derived_id(entry.oid, oid))
    return out


def blob_id(data: bytes, width: int = 40) -> str:
    """git's object id of a blob holding `data` (SHA-1, or SHA-256 in a repository of 64-digit ids)."""
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def derived_id(old: str, patched_blob: str) -> str:
    """An id for a directory whose content changed by one blob: never a real tree's, stable for the
    same patch, as wide as git's."""
    digest = hashlib.sha256 if len(old) == 64 else hashlib.sha1
    return digest(f"patched {old} {patched_blob}".encode()).hexdigest()
