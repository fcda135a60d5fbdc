"""One directory of a commit, read without listing the whole commit: what a chart-version claim
needs of each open PR's head and merge base. A repository of thousands of files reads one chart
directory instead of listing every file, twice per PR; a directory is read a tree object at a time,
only as deep as asked, each level remembered by its id, so the PRs that leave a chart alone share
what was read of it (most of them, at hundreds of PRs), and two sides are compared without reading
the subtrees they share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.git.repo import SYMLINK, Entry, GitRepo
from bot.lru import BoundedCache

# Entries of tree objects kept, in all (one level each, and whole listings for `paths`).
_ENTRIES = 200_000

_LEVELS: BoundedCache[tuple[str, str], dict[str, Entry]] = BoundedCache(_ENTRIES, len)
_LISTINGS: BoundedCache[tuple[str, str], dict[str, Entry]] = BoundedCache(_ENTRIES, len)
_NOTHING: dict[str, Entry] = {}


class Subtree:
    """The files under `directory` at `commit` (the `Tree` protocol, for paths in that directory:
    any other path reads as absent). `tree_id` is the directory's tree, None where there is none."""

    def __init__(self, repo: GitRepo, commit: str, directory: str, tree_id: str | None) -> None:
        self.repo = repo
        self.commit = commit
        self.directory = directory
        self.tree_id = tree_id
        self._lead = _lead(directory)

    def content_id(self, path: str) -> str | None:
        """The blob id `read` returns the content of, or None where `read` returns None: two paths
        read the same bytes exactly when their ids are equal."""
        if not path.startswith(self._lead) or self.tree_id is None:
            return None
        *dirs, name = path[len(self._lead) :].split("/")
        tree: str | None = self.tree_id
        for part in dirs:
            entry = level(self.repo, tree).get(part) if tree else None
            tree = entry.oid if entry is not None and entry.kind == "tree" else None
        return readable(level(self.repo, tree).get(name)) if tree else None

    def changed_since(self, base_tree: str | None) -> tuple[str, ...]:
        """The files under the directory that differ from `base_tree` (the directory's tree on the
        other side, None where it had none): added, removed, or read differently, as comparing
        every file's content would find them; subtrees with one id on both sides are not read."""
        changed: list[str] = []
        _diff(self.repo, base_tree, self.tree_id, self._lead, changed)
        return tuple(sorted(changed))

    def read(self, path: str) -> bytes | None:
        oid = self.content_id(path)
        return None if oid is None else self.repo.blob(oid)

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        lead = _lead(prefix)
        files = (self._lead + p for p, e in self._listing().items() if e.kind != "tree")
        return tuple(sorted(p for p in files if p.startswith(lead)))

    def _listing(self) -> Mapping[str, Entry]:
        tree = self.tree_id
        if tree is None:
            return _NOTHING
        return _LISTINGS.get_or_make(
            (str(self.repo.path), tree), lambda: self.repo.tree_listing(tree)
        )


def subtrees(
    repo: GitRepo, directory: str, commits: Sequence[str], read: Sequence[str] = ()
) -> dict[str, Subtree]:
    """`directory` at each commit: the directories' tree ids in one `cat-file` batch, their top
    level in another, and the files named in `read` (paths in the directory, e.g. `Chart.yaml`)
    in a third; below that, nothing is read until asked. A commit without the directory gets an
    empty one."""
    unique = list(dict.fromkeys(commits))
    lead = _lead(directory)
    names = [f"{c}:{lead.rstrip('/')}" if lead else f"{c}^{{tree}}" for c in unique]
    found = {}
    for commit, info in zip(unique, repo.object_infos(names), strict=True):
        tree = info[0] if info is not None and info[1] == "tree" else None
        found[commit] = Subtree(repo, commit, directory, tree)
    _read_levels(repo, [t.tree_id for t in found.values() if t.tree_id])
    wanted = {oid for t in found.values() for p in read if (oid := t.content_id(lead + p))}
    repo.blobs(list(wanted))  # remembered by the repository's blob cache
    return found


def _read_levels(repo: GitRepo, trees: list[str]) -> None:
    where = str(repo.path)
    missing = [t for t in dict.fromkeys(trees) if _LEVELS.get((where, t)) is None]
    for tree, entries in zip(missing, repo.tree_levels(missing), strict=True):
        _LEVELS.put((where, tree), entries)


def _diff(repo: GitRepo, before: str | None, after: str | None, lead: str, out: list[str]) -> None:
    if before == after:
        return
    old = level(repo, before) if before else _NOTHING
    new = level(repo, after) if after else _NOTHING
    for name in old.keys() | new.keys():
        a, b = old.get(name), new.get(name)
        sub_a = a.oid if a is not None and a.kind == "tree" else None
        sub_b = b.oid if b is not None and b.kind == "tree" else None
        if sub_a or sub_b:
            _diff(repo, sub_a, sub_b, f"{lead}{name}/", out)
        file_a = a if a is not None and a.kind != "tree" else None
        file_b = b if b is not None and b.kind != "tree" else None
        if (file_a is None) != (file_b is None) or readable(file_a) != readable(file_b):
            out.append(lead + name)


def level(repo: GitRepo, tree: str) -> dict[str, Entry]:
    """One tree object's entries, remembered by its id."""
    return _LEVELS.get_or_make((str(repo.path), tree), lambda: repo.tree_levels([tree])[0])


def readable(entry: Entry | None) -> str | None:
    """What `Tree.read` makes of an entry, as an id: a file's blob; None for a symlink or a
    submodule, which read as absent."""
    if entry is None or entry.kind != "blob" or entry.mode == SYMLINK:
        return None
    return entry.oid


def _lead(directory: str) -> str:
    return directory.rstrip("/") + "/" if directory not in ("", ".") else ""
