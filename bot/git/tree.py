"""A commit's files, read a directory at a time: tree objects' entries and the `GitTree` view.

A review reads whole trees of the PR's base and head, but of each other open PR it reads one chart
directory, and of each dependency one more: a repository of thousands of files is listed whole only
when something asks for every path. Tree objects are read through the repository's long-lived
`cat-file` and remembered by id, so what one commit read of a directory another shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

SYMLINK, SUBMODULE, TREE_MODE = "120000", "160000", "040000"  # git tree modes
KINDS = {TREE_MODE: "tree", SUBMODULE: "commit"}


class Entry(NamedTuple):
    """One entry of a tree object. A named tuple, not a frozen dataclass: a review makes tens of
    thousands (a 3,000-file tree is 3,000), and a tuple is made in a third of the time."""

    mode: str
    kind: str
    oid: str


# One tree object's entries: name -> Entry, in the object's order (git's, which `ls-tree` keeps).
Level = dict[str, Entry]


def parse_tree(data: bytes, width: int) -> Level:
    """A tree object's entries, modes written as `ls-tree` writes them: git's canonical mode for
    each kind, six octal digits. `width`: bytes of an object id (SHA-1 or SHA-256)."""
    entries: Level = {}
    pos, end = 0, len(data)
    index = data.index
    while pos < end:
        space = index(b" ", pos)
        nul = index(b"\0", space)
        mode, kind = _mode_kind(data[pos:space])
        stop = nul + 1 + width
        name = data[space + 1 : nul].decode(errors="surrogateescape")
        entries[name] = Entry(mode, kind, data[nul + 1 : stop].hex())
        pos = stop
    return entries


def _mode_kind(raw: bytes) -> tuple[str, str]:
    known = _MODES.get(raw)
    if known is None:
        mode = _canonical_mode(raw)
        known = (mode, KINDS.get(mode, "blob"))
        if len(_MODES) < _MODES_KEPT:  # a crafted tree may write a mode many ways (`0100644`)
            _MODES[raw] = known
    return known


# A mode as written in a tree object -> git's canonical mode and the entry's kind.
_MODES: dict[bytes, tuple[str, str]] = {}
_MODES_KEPT = 64


def _canonical_mode(raw: bytes) -> str:
    mode = int(raw, 8)
    kind = mode & 0o170000
    if kind == 0o100000:  # a file: executable or not, whatever else the mode says
        return "100755" if mode & 0o100 else "100644"
    return {0o120000: SYMLINK, 0o040000: TREE_MODE}.get(kind, SUBMODULE)


def readable(entry: Entry | None) -> str | None:
    """What `Tree.read` makes of an entry, as an id: a file's blob; None for a directory, a
    symlink or a submodule, which read as absent."""
    if entry is None or entry.kind != "blob" or entry.mode == SYMLINK:
        return None
    return entry.oid


_UNSEEN: Level = {}


class TreeObjects(Protocol):
    """What a view of a commit's files reads of the object store (GitRepo is one): tree objects a
    level at a time and blobs, each remembered by id. Declared here, not imported from the
    repository, so that the views stand below it."""

    def root_tree(self, commit: str) -> str | None: ...
    def root_trees(self, commits: Sequence[str]) -> list[str | None]: ...
    def directory_trees(self, commits: Sequence[str], directory: str) -> list[str | None]: ...
    def level(self, tree: str) -> Level: ...
    def levels(self, trees: list[str]) -> list[Level]: ...
    def blob(self, oid: str) -> bytes: ...
    def blobs(self, oids: list[str]) -> list[bytes]: ...
    def file_paths_under(self, tree: str, lead: str = "") -> tuple[str, ...]: ...
    def dirs_holding(self, tree: str, name: str) -> tuple[str, ...]: ...
    def paths_between(self, a: str, b: str) -> frozenset[str] | None: ...


class GitTree:
    """The files of a repository at one commit (the `Tree` protocol of bot.model.context).

    Lookups walk the directories they name, each read once (a review asks tens of thousands, most
    in a few directories); `paths(prefix)` lists the directory's tree, and only `paths()` of the
    whole tree lists every file."""

    def __init__(self, repo: TreeObjects, commit: str) -> None:
        self.repo = repo
        self.commit = commit
        self._dirs: dict[str, Level | None] = {}

    def entry(self, path: str) -> Entry | None:
        if path.startswith("/"):
            return None  # no tree entry has an empty name
        directory, _, name = path.rpartition("/")
        level = self._dirs.get(directory, _UNSEEN)
        if level is _UNSEEN:
            level = self._dirs[directory] = self._directory(directory)
        return level.get(name) if level is not None else None

    def _directory(self, directory: str) -> Level | None:
        if not directory:
            root = self.repo.root_tree(self.commit)
            return self.repo.level(root) if root is not None else None
        entry = self.entry(directory)  # its parent, walked the same way (and remembered)
        return self.repo.level(entry.oid) if entry is not None and entry.kind == "tree" else None

    def is_file(self, path: str) -> bool:
        """Whether `paths()` lists `path`: an entry that is no directory (a submodule's counts),
        found by walking its directories alone."""
        entry = self.entry(path)
        return entry is not None and entry.kind != "tree"

    def read(self, path: str) -> bytes | None:
        oid = readable(self.entry(path))
        return None if oid is None else self.repo.blob(oid)

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_many(self, paths: Sequence[str]) -> list[bytes | None]:
        """`read` of each path, the blobs in one request to the long-lived cat-file: an index of
        every file of a tree (checks/headings/index.py) reads thousands at once."""
        oids = [readable(self.entry(p)) for p in paths]
        blobs = iter(self.repo.blobs([oid for oid in oids if oid is not None]))
        return [next(blobs) if oid is not None else None for oid in oids]

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        tree = self.tree_id(prefix)
        if tree is None:
            return ()
        lead = prefix.rstrip("/") + "/" if prefix not in ("", ".") else ""
        return self.repo.file_paths_under(tree, lead)

    def dirs_with(self, name: str) -> tuple[str, ...]:
        root = self.repo.root_tree(self.commit)
        found = self.repo.dirs_holding(root, name) if root is not None else ()
        return tuple(sorted(d or "." for d in found))

    def paths_changed_from(self, tree: str) -> frozenset[str] | None:
        """The paths whose files differ between the tree object `tree` of this repository and
        this tree (GitRepo.paths_between); None when they cannot be compared."""
        root = self.repo.root_tree(self.commit)
        return None if root is None else self.repo.paths_between(tree, root)

    def tree_id(self, directory: str) -> str | None:
        if directory in ("", "."):
            return self.repo.root_tree(self.commit)
        entry = self.entry(directory.rstrip("/"))
        return entry.oid if entry is not None and entry.kind == "tree" else None
