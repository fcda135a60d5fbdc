"""A repository's files at any commit: tree objects a level at a time, whole listings, the
directories holding a file, blobs and object sizes, each read through the long-lived `cat-file`
(bot/git/process.py) and remembered by the object's id, which names the same content for good.

Turning a chart directory into an archive for Helm is bot/charts/archive.py's job."""

from __future__ import annotations

import os
from collections.abc import Sequence, Sized

from bot.git.process import GitError, GitProcess
from bot.git.subtree import Subtree, subtrees
from bot.git.tree import Entry, GitTree, Level, parse_tree
from bot.lru import BoundedCache

# The directories `dirs_holding` answers at most: more charts than any repository holds.
_HOLDING_MAX = 100_000
# The entries `tree_listing` lists at most: fifty times a large chart repository's files. A tree
# naming one subtree under many names multiplies its paths at each level; listed path by path, a
# few objects would fill the memory.
_LISTING_MAX = 500_000
# Trees kept, counted in entries (~200 bytes each): one level of each directory object, enough for
# every directory of a few trees of a 10,000-file repository; recursive listings of trees and the
# sorted files under them (a few whole trees, and the many chart directories read of other heads).
_LEVEL_ENTRIES = 200_000
_LISTED_ENTRIES = 300_000
_ROOTS = 100_000  # commits' tree ids (two short strings each)
# Blobs by id never change, and base and head share most of them (a PR changes a few files): a
# worker keeps the recent ones, up to this many bytes in all, none larger than the second.
_BLOB_BYTES, _BLOB_MAX = 32 << 20, 1 << 20


class Listings(GitProcess):
    """Trees and blobs of one repository, remembered (thread-safe for reads)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        self._roots: BoundedCache[str, str] = BoundedCache(_ROOTS)
        # (commit, directory) → the directory's tree id, "" where it has none.
        self._dirs: BoundedCache[tuple[str, str], str] = BoundedCache(_ROOTS)
        self._levels: BoundedCache[str, Level] = BoundedCache(_LEVEL_ENTRIES, _weight)
        self._tree_listings: BoundedCache[str, dict[str, Entry]] = BoundedCache(
            _LISTED_ENTRIES, _weight
        )
        self._file_paths: BoundedCache[tuple[str, str], tuple[str, ...]] = BoundedCache(
            _LISTED_ENTRIES, _weight
        )
        # (tree id, name) → the directories under the tree holding a file of that name.
        self._holding: BoundedCache[tuple[str, str], tuple[str, ...]] = BoundedCache(
            _LISTED_ENTRIES, lambda dirs: 1 + len(dirs)
        )
        self._blobs: BoundedCache[str, bytes] = BoundedCache(_BLOB_BYTES, len)

    def tree(self, commit: str) -> GitTree:
        return GitTree(self, commit)

    def root_tree(self, commit: str) -> str | None:
        """The commit's tree id; None when there is no such commit. Remembered."""
        found = self._roots.get(commit)
        return found if found is not None else self.root_trees([commit])[0]

    def root_trees(self, commits: Sequence[str]) -> list[str | None]:
        """`root_tree` of each commit: those not remembered in one pipelined `cat-file` batch."""
        found = {c: self._roots.get(c) for c in commits}
        missing = [
            c for c, tree in found.items() if tree is None and "\n" not in c and "\0" not in c
        ]
        if missing:
            with self._lock:
                infos = self._object_infos([f"{c}^{{tree}}" for c in missing])
            for commit, info in zip(missing, infos, strict=True):
                if info is not None and info[1] == "tree":
                    self._roots.put(commit, info[0])
                    found[commit] = info[0]
        return [found[c] for c in commits]

    def directory_trees(self, commits: Sequence[str], directory: str) -> list[str | None]:
        """The tree id of `directory` (a path in the repository, not "") at each commit; None
        where it is no directory (absent, a file, a symlink or a submodule), or no such commit.
        git walks the path itself (`<commit>:<path>`, one batch for the commits not remembered):
        hundreds of PRs' commits have as many root trees, each read only to find the next level."""
        key = directory.strip("/")
        if not _plain_path(key):
            return [None] * len(commits)  # no tree entry is named "", "." or ".."
        found = {c: self._dirs.get((c, key)) for c in commits}
        missing = [
            c for c, tree in found.items() if tree is None and "\n" not in c and "\0" not in c
        ]
        if missing:
            with self._lock:
                infos = self._object_infos([f"{c}:{key}" for c in missing])
            for commit, info in zip(missing, infos, strict=True):
                tree = info[0] if info is not None and info[1] == "tree" else ""
                self._dirs.put((commit, key), tree)
                found[commit] = tree
        return [found[c] or None for c in commits]

    def level(self, tree: str) -> Level:
        """One tree object's entries (name → Entry), not those of the trees below it."""
        found = self._levels.get(tree)
        return found if found is not None else self.levels([tree])[0]

    def levels(self, trees: list[str]) -> list[Level]:
        """`level` of each tree: those not remembered in one pipelined `cat-file` batch."""
        found = {tree: self._levels.get(tree) for tree in trees}
        missing = [tree for tree, level in found.items() if level is None]
        if missing:
            if any("\n" in t or "\0" in t for t in missing):
                raise GitError(f"git ls-tree failed: not a valid object name {missing[0]!r}")
            with self._lock:
                read = self._read_objects([f"{t}^{{tree}}" for t in missing], "ls-tree")
            for tree, (oid, _, data) in zip(missing, read, strict=True):
                level = parse_tree(data, len(oid) // 2)
                self._levels.put(tree, level)
                found[tree] = level
        return [found[tree] or {} for tree in trees]

    def dirs_holding(self, tree: str, name: str) -> tuple[str, ...]:
        """The directories under a tree object (paths relative to it, "" for itself) holding an
        entry `name` that is not a directory, sorted: where the charts are (`Chart.yaml`), without
        listing every file. Remembered by tree id, so a second commit's tree reads only the
        directories it changed."""
        found = self._holding.get((tree, name))
        if found is not None:
            return found
        below = [tree]
        while below:  # the trees not yet known, a depth at a time: one `cat-file` request each
            levels = self.levels(below)
            below = list(
                dict.fromkeys(
                    e.oid
                    for level in levels
                    for e in level.values()
                    if e.kind == "tree" and self._holding.get((e.oid, name)) is None
                )
            )
        return self._held(tree, name)

    def _held(self, tree: str, name: str) -> tuple[str, ...]:
        """Bottom-up from what `dirs_holding` read, each tree once (without recursing: a PR's
        directories may nest past Python's stack), and no more than _HOLDING_MAX directories (a
        tree repeating one subtree under many names multiplies its paths at every level)."""
        done: dict[str, tuple[str, ...]] = {}
        stack = [(tree, False)]
        while stack:
            current, below_done = stack.pop()
            if current in done:
                continue
            known = self._holding.get((current, name))
            if known is not None:
                done[current] = known
                continue
            level = self.level(current)
            subtrees = [(child, e.oid) for child, e in level.items() if e.kind == "tree"]
            if not below_done:
                stack.append((current, True))
                stack.extend((oid, False) for _, oid in subtrees)
                continue
            entry = level.get(name)
            dirs = [""] if entry is not None and entry.kind != "tree" else []
            for child, oid in subtrees:
                dirs += [f"{child}/{d}" if d else child for d in done[oid]]
                if len(dirs) > _HOLDING_MAX:
                    raise GitError(
                        f"tree {tree}: more than {_HOLDING_MAX:,} directories hold a {name}"
                    )
            done[current] = tuple(sorted(dirs))
            self._holding.put((current, name), done[current])
        return done[tree]

    def listing(self, commit: str) -> dict[str, Entry]:
        """Every entry of the commit's tree, recursively: path → Entry."""
        root = self.root_tree(commit)
        if root is None:
            raise GitError(f"git ls-tree failed: not a valid object name {commit!r}")
        return self.tree_listing(root)

    def listing_under(self, commit: str, directory: str) -> dict[str, Entry]:
        """Every entry under `directory` at `commit`, paths relative to it; empty where there is
        no such directory. Reads that directory's trees only."""
        tree = self.tree(commit).tree_id(directory)
        return self.tree_listing(tree) if tree is not None else {}

    def tree_listing(self, tree: str) -> dict[str, Entry]:
        """What `git ls-tree -r -t` lists of a tree object (the same entries, modes and order),
        paths relative to it, read a level of directories at a time (one `cat-file` request each,
        where `ls-tree` would be one more process). Remembered by the tree's id: two commits of
        the same files (a squash merge of a PR's head) share it."""
        same = self._tree_listings.get(tree)
        if same is not None:
            return same
        levels = {tree: self.level(tree)}
        below = [tree]
        while below:  # one level of directories at a time, each read once
            below = [
                e.oid
                for parent in below
                for e in levels[parent].values()
                if e.kind == "tree" and e.oid not in levels
            ]
            below = list(dict.fromkeys(below))
            levels.update(zip(below, self.levels(below), strict=True))
        listing: dict[str, Entry] = {}
        # Depth first, a directory before what it holds, as `ls-tree -r -t` lists them.
        stack = [("", iter(levels[tree].items()))]
        while stack:
            prefix, entries = stack[-1]
            item = next(entries, None)
            if item is None:
                stack.pop()
                continue
            name, entry = item
            path = prefix + name
            listing[path] = entry
            if len(listing) > _LISTING_MAX:
                raise GitError(f"tree {tree}: more than {_LISTING_MAX:,} entries; not listed")
            if entry.kind == "tree":
                stack.append((path + "/", iter(levels[entry.oid].items())))
        self._tree_listings.put(tree, listing)
        return listing

    def file_paths_under(self, tree: str, lead: str = "") -> tuple[str, ...]:
        """The paths of the files under a tree object (no directories), each after `lead`, sorted.
        Remembered: checks ask for a directory's files thousands of times a review."""
        found = self._file_paths.get((tree, lead))
        if found is None:
            files = sorted(p for p, e in self.tree_listing(tree).items() if e.kind != "tree")
            found = tuple(lead + p for p in files)
            self._file_paths.put((tree, lead), found)
        return found

    def paths_between(self, a: str, b: str) -> frozenset[str] | None:
        """Every path whose entry differs between two trees (or commits), on either side, a
        rename counted as the deletion and the addition it is; None when git cannot compare them
        (an object this repository does not hold)."""
        proc = self._run("diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b, check=False)
        if proc.returncode != 0:
            return None
        return frozenset(p.decode(errors="surrogateescape") for p in proc.stdout.split(b"\0") if p)

    def clear_listings(self) -> None:
        """Forget cached trees and blobs (benchmarks measure a cold review)."""
        caches = (self._roots, self._dirs, self._levels, self._tree_listings, self._file_paths)
        for cache in (*caches, self._holding):
            cache.clear()
        self._blobs.clear()

    def blob(self, oid: str) -> bytes:
        return self.blobs([oid])[0]

    def blobs(self, oids: list[str]) -> list[bytes]:
        """Blobs by id: those read recently from memory, the others through `_read_blobs`."""
        found = {oid: self._blobs.get(oid) for oid in oids}
        if all(data is not None for data in found.values()):
            return [found[oid] or b"" for oid in oids]
        with self._lock:
            # Looked up again once it is this thread's turn: base's and head's archives are built
            # side by side and share most blobs, which the other may have just read.
            missing = [oid for oid, data in found.items() if data is None]
            found.update({oid: self._blobs.get(oid) for oid in missing})
            missing = [oid for oid in missing if found[oid] is None]
            for oid, data in zip(missing, self._read_blobs(missing), strict=True):
                found[oid] = data
                if len(data) <= _BLOB_MAX:
                    self._blobs.put(oid, data)
        return [found[oid] or b"" for oid in oids]

    def _read_blobs(self, oids: list[str]) -> list[bytes]:
        """Blobs by id through the long-lived `cat-file --batch`. The caller holds the lock."""
        return [data for _, _, data in self._read_objects(oids)]

    def subtrees(
        self, directory: str, commits: Sequence[str], read: Sequence[str] = ()
    ) -> dict[str, Subtree]:
        """`directory` at each commit, without listing the commits' other files; the files named
        in `read` (relative to the directory) are read at once (bot/git/subtree.py)."""
        return subtrees(self, directory, commits, read)

    def object_infos(self, names: list[str]) -> list[tuple[str, str] | None]:
        """Objects by name (`<commit>:<path>`, `<commit>^{tree}`) → (id, type), or None where there
        is none, asked of the long-lived `cat-file` in one pipelined batch."""
        plain = ["" if "\n" in n or "\0" in n else n for n in names]
        with self._lock:
            infos = iter(self._object_infos([n for n in plain if n]))
        return [next(infos) if n else None for n in plain]

    def object_sizes(self, names: list[str]) -> list[int | None]:
        """Each object's size in bytes (`<commit>:<path>` names a blob), None where there is none:
        asked before a blob that may be large is read."""
        plain = ["" if "\n" in n or "\0" in n else n for n in names]
        with self._lock:
            headers = self._headers([n for n in plain if n])
        sizes = iter(int(h[2]) if h is not None else None for h in headers)
        return [next(sizes) if n else None for n in plain]


def _plain_path(path: str) -> bool:
    """A path as tree entries name it: no empty, "." or ".." part (which `<commit>:<path>` would
    read relative to the working directory), no line break or NUL (which end a request)."""
    parts = path.split("/")
    return all(p not in ("", ".", "..") for p in parts) and "\n" not in path and "\0" not in path


def _weight(entries: Sized) -> int:
    return 1 + len(entries)
