"""One directory of a commit, read without listing the whole commit: what a chart-version claim
needs of each open PR's head and merge base. A repository of thousands of files reads one chart
directory instead of listing every file, twice per PR; a directory is read a tree object at a time,
only as deep as asked, each level remembered by its id, so the PRs that leave a chart alone share
what was read of it (most of them, at hundreds of PRs), and two sides are compared without reading
the subtrees they share."""

from __future__ import annotations

from collections.abc import Sequence

from bot.git.tree import Entry, TreeObjects, readable
from bot.lru import BoundedCache

_NOTHING: dict[str, Entry] = {}
# What changed between two trees, by their ids (content: the same in any repository): the version
# check, the duplicates check and their read-ahead each ask it of hundreds of open PRs.
_CHANGED: BoundedCache[tuple[str | None, str | None, str], tuple[str, ...]] = BoundedCache(
    8192, lambda paths: 1 + len(paths)
)


class Subtree:
    """The files under `directory` at `commit` (the `Tree` protocol, for paths in that directory:
    any other path reads as absent). `tree_id` is the directory's tree, None where there is none."""

    def __init__(
        self,
        repo: TreeObjects,
        commit: str,
        directory: str,
        tree_id: str | None,
        ids: dict[str, str | None] | None = None,
    ) -> None:
        self.repo = repo
        self.commit = commit
        self.directory = directory
        self.tree_id = tree_id
        self._lead = _lead(directory)
        # Paths' content ids, shared by the subtrees of one tree (most PRs leave a chart alone).
        self._ids = ids if ids is not None else {}

    def content_id(self, path: str) -> str | None:
        """The blob id `read` returns the content of, or None where `read` returns None: two paths
        read the same bytes exactly when their ids are equal."""
        if path in self._ids:
            return self._ids[path]
        found = self._ids[path] = self._content_id(path)
        return found

    def _content_id(self, path: str) -> str | None:
        return readable(self._entry(path))

    def _entry(self, path: str) -> Entry | None:
        if not path.startswith(self._lead) or self.tree_id is None:
            return None
        *dirs, name = path[len(self._lead) :].split("/")
        tree: str | None = self.tree_id
        for part in dirs:
            entry = self.repo.level(tree).get(part) if tree else None
            tree = entry.oid if entry is not None and entry.kind == "tree" else None
        return self.repo.level(tree).get(name) if tree else None

    def is_file(self, path: str) -> bool:
        entry = self._entry(path)
        return entry is not None and entry.kind != "tree"

    def changed_since(self, base_tree: str | None) -> tuple[str, ...]:
        """The files under the directory that differ from `base_tree` (the directory's tree on the
        other side, None where it had none): added, removed, or read differently, as comparing
        every file's content would find them; subtrees with one id on both sides are not read."""
        key = (base_tree, self.tree_id, self._lead)
        found = _CHANGED.get(key)
        if found is None:
            changed: list[str] = []
            _diff(self.repo, base_tree, self.tree_id, self._lead, changed)
            found = tuple(sorted(changed))
            _CHANGED.put(key, found)
        return found

    def read(self, path: str) -> bytes | None:
        oid = self.content_id(path)
        return None if oid is None else self.repo.blob(oid)

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def dirs_with(self, name: str) -> tuple[str, ...]:
        if self.tree_id is None:
            return ()
        found = self.repo.dirs_holding(self.tree_id, name)
        return tuple(sorted((self._lead + d).rstrip("/") or "." for d in found))

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        lead = _lead(prefix)
        if self.tree_id is None:
            return ()
        files = self.repo.file_paths_under(self.tree_id, self._lead)
        return tuple(p for p in files if p.startswith(lead)) if lead != self._lead else files


def subtrees(
    repo: TreeObjects, directory: str, commits: Sequence[str], read: Sequence[str] = ()
) -> dict[str, Subtree]:
    """`directory` at each commit: the commits' trees in one `cat-file` batch, each level of
    directories on the way in one more, the directory's top level, and the files named in `read`
    (paths in the directory, e.g. `Chart.yaml`); below that, nothing is read until asked. A commit
    without the directory gets an empty one."""
    unique = list(dict.fromkeys(commits))
    lead = _lead(directory)
    # The directory's tree at each commit, git walking the path (remembered by the repository,
    # across calls: the version and duplicates checks walk the same commits).
    found_trees = repo.directory_trees(unique, lead) if lead else repo.root_trees(unique)
    trees = dict(zip(unique, found_trees, strict=True))
    ids: dict[str | None, dict[str, str | None]] = {}
    found = {
        c: Subtree(repo, c, directory, tree, ids.setdefault(tree, {})) for c, tree in trees.items()
    }
    repo.levels([t for t in dict.fromkeys(trees.values()) if t is not None])
    wanted = {oid for t in found.values() for p in read if (oid := t.content_id(lead + p))}
    repo.blobs(list(wanted))  # remembered by the repository's blob cache
    return found


def read_differences(repo: TreeObjects, pairs: Sequence[tuple[str | None, str | None]]) -> None:
    """Reads the trees `changed_since` walks between each pair of directory trees (before, after),
    a level at a time for every pair at once: one `cat-file` request a level, where walking each
    pair alone asks for two trees at a time. Remembered by the repository."""
    while pairs:
        repo.levels(list(dict.fromkeys(t for pair in pairs for t in pair if t)))
        below: list[tuple[str | None, str | None]] = []
        for before, after in dict.fromkeys(pairs):
            if before == after:
                continue
            old = repo.level(before) if before else _NOTHING
            new = repo.level(after) if after else _NOTHING
            for name in old.keys() | new.keys():
                a, b = _subtree_id(old.get(name)), _subtree_id(new.get(name))
                if a != b:
                    below.append((a, b))
        pairs = below


def _subtree_id(entry: Entry | None) -> str | None:
    return entry.oid if entry is not None and entry.kind == "tree" else None


def _diff(
    repo: TreeObjects, before: str | None, after: str | None, lead: str, out: list[str]
) -> None:
    if before == after:
        return
    old = repo.level(before) if before else _NOTHING
    new = repo.level(after) if after else _NOTHING
    for name in old.keys() | new.keys():
        a, b = old.get(name), new.get(name)
        sub_a, sub_b = _subtree_id(a), _subtree_id(b)
        if sub_a or sub_b:
            _diff(repo, sub_a, sub_b, f"{lead}{name}/", out)
        file_a = a if a is not None and a.kind != "tree" else None
        file_b = b if b is not None and b.kind != "tree" else None
        if (file_a is None) != (file_b is None) or readable(file_a) != readable(file_b):
            out.append(lead + name)


def _lead(directory: str) -> str:
    return directory.rstrip("/") + "/" if directory not in ("", ".") else ""
