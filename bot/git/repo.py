"""git objects at any commit, read without touching a work tree (bare or not).

Everything goes through `git` itself: one long-lived `cat-file --batch` per repository for blobs,
tree listings and ref lookups, and plain commands for the rest (diffs, merge bases, logs). Turning a
chart directory into an archive for Helm is bot/engine/chart/archive.py's job."""

from __future__ import annotations

import bisect
import os
import subprocess
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from bot.errors import ChartReviewError
from bot.git.diff import DIFF_FORMAT, parse_diff
from bot.git.fork_points import ForkPoint, fork_points
from bot.git.history import LOG_FORMAT, LogEntry, parse_first_parent_log
from bot.git.objects import ChangedFile, Commit
from bot.lru import BoundedCache

if TYPE_CHECKING:
    from bot.git.subtree import Subtree

SYMLINK, SUBMODULE = "120000", "160000"  # git tree modes
# Requests go to the long-lived `cat-file` in chunks that fit in a pipe's buffer (64 KiB on Linux),
# so writing one never waits on git, which may be writing replies that are only read afterwards.
_BATCH_CHUNK_BYTES = 16 << 10
_LISTINGS = 64  # commits whose file listing a long-lived worker keeps
_SUBTREE_ENTRIES = 200_000  # ~40 MB: every directory of a few trees of a 10,000-file repository
# Blobs by id never change, and base and head share most of them (a PR changes a few files): a
# worker keeps the recent ones, up to this many bytes in all, none larger than the second.
_BLOB_BYTES, _BLOB_MAX = 32 << 20, 1 << 20
# Chart archives by content, so a base reviewed again (every PR against develop) is not rebuilt.


class RefTip(NamedTuple):
    sha: str
    date: int  # committer date, seconds since the epoch


class GitError(ChartReviewError):
    """A git command failed; the message names the command and git's reason."""


@dataclass(frozen=True)
class Entry:
    mode: str
    kind: str
    oid: str


class GitRepo:
    """One repository on disk. Thread-safe for reads."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._batch: subprocess.Popen[bytes] | None = None
        self._listings: BoundedCache[str, dict[str, Entry]] = BoundedCache(_LISTINGS)
        self._file_paths: BoundedCache[str, tuple[str, ...]] = BoundedCache(_LISTINGS)
        self._tree_listings: BoundedCache[str, dict[str, Entry]] = BoundedCache(_LISTINGS)
        # Tree objects' entries by id, weighed by entries (~200 bytes each): a commit's listing
        # reads only the directories no earlier listing had.
        self._subtrees: BoundedCache[str, list[tuple[bytes, str, str]]] = BoundedCache(
            _SUBTREE_ENTRIES, lambda entries: 1 + len(entries)
        )
        self._blobs: BoundedCache[str, bytes] = BoundedCache(_BLOB_BYTES, len)
        if self._run("rev-parse", "--git-dir", check=False).returncode != 0:
            raise GitError(f"{self.path}: not a git repository")

    # -- commands ---------------------------------------------------------------------------------

    def _run(
        self, *args: str, check: bool = True, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=input,
            capture_output=True,
            env=_GIT_ENV,
        )
        if check and proc.returncode != 0:
            reason = proc.stderr.decode(errors="replace").strip().splitlines()
            raise GitError(
                f"git {args[0]} failed: {reason[-1] if reason else 'exit ' + str(proc.returncode)}"
            )
        return proc

    def _out(self, *args: str) -> str:
        return self._run(*args).stdout.decode(errors="replace")

    def close(self) -> None:
        with self._lock:
            if self._batch is not None:
                self._batch.kill()
                self._batch.wait()
                self._batch = None

    # -- refs and history -------------------------------------------------------------------------

    def resolve(self, ref: str) -> str | None:
        proc = self._run(
            "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False
        )
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def resolve_many(self, refs: list[str]) -> dict[str, str | None]:
        """`resolve` for several refs, each read as a revision exactly as `rev-parse` reads it:
        ref → commit sha, or None. Asked of the long-lived `cat-file` (no new process); one that
        it does not find is asked again of a new one, which also sees loose objects written since
        the long-lived one started (an abbreviated id is expanded from a cache of them)."""
        wanted = list(dict.fromkeys(r for r in refs if r))
        # A line break or NUL cannot be part of a ref, but would split a request line.
        plain = [r for r in wanted if "\n" not in r and "\0" not in r]
        with self._lock:
            infos = self._object_infos([f"{r}^{{commit}}" for r in plain])
        found: dict[str, str | None] = {
            ref: info[0] for ref, info in zip(plain, infos, strict=True) if info is not None
        }
        again = [r for r in wanted if r not in found]
        if again:
            found.update(self._resolve_each(again))
        return {r: found[r] for r in wanted}

    def _resolve_each(self, refs: list[str]) -> dict[str, str | None]:
        """`resolve` for several refs in one new git process (`cat-file --batch-check`)."""
        plain = [r for r in refs if "\n" not in r and "\0" not in r]
        found: dict[str, str | None] = {r: self.resolve(r) for r in refs if r not in plain}
        if plain:
            request = "".join(f"{r}^{{commit}}\n" for r in plain).encode()
            proc = self._run(
                "cat-file", "--batch-check=%(objectname) %(objecttype)", input=request, check=False
            )
            lines = proc.stdout.decode(errors="replace").splitlines()
            if proc.returncode != 0 or len(lines) != len(plain):
                return {r: self.resolve(r) for r in refs}
            for ref, line in zip(plain, lines, strict=True):
                sha, _, kind = line.partition(" ")
                found[ref] = sha if kind == "commit" else None
        return found

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self._run("merge-base", a, b, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return (
            self._run("merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode
            == 0
        )

    def commits_outside(self, heads: list[str], outside: str) -> dict[str, tuple[str, ...]] | None:
        """Every commit reachable from `heads` but not from `outside`, with its parents, in one
        `rev-list` however many heads (`bot/git/fork_points.py` reads merge bases from it); None
        when git refuses (a head that is no commit)."""
        wanted = [h for h in dict.fromkeys(heads) if h and "\n" not in h and "\0" not in h]
        request = "".join(f"{h}\n" for h in wanted) + f"^{outside}\n"
        proc = self._run("rev-list", "--parents", "--stdin", input=request.encode(), check=False)
        if proc.returncode != 0:
            return None
        graph: dict[str, tuple[str, ...]] = {}
        for line in proc.stdout.decode().splitlines():
            sha, *parents = line.split()
            graph[sha] = tuple(parents)
        return graph

    def fork_points(self, develop: str, heads: Sequence[str]) -> dict[str, ForkPoint]:
        """Each head's merge base with `develop`, or that develop contains it: one `rev-list` for
        them all, remembered by commit ids (bot/git/fork_points.py)."""
        return fork_points(self, develop, heads)

    def subtrees(
        self, directory: str, commits: Sequence[str], read: Sequence[str] = ()
    ) -> dict[str, Subtree]:
        """`directory` at each commit, without listing the commits' other files; the files named
        in `read` (relative to the directory) are read at once (bot/git/subtree.py)."""
        from bot.git.subtree import subtrees  # it builds on this module's listings

        return subtrees(self, directory, commits, read)

    def first_parent_ids(self, rev: str, max_count: int) -> list[str]:
        """The commits of `rev`'s first-parent history, newest first, at most `max_count`."""
        out = self._out("rev-list", "--first-parent", f"--max-count={max_count}", rev, "--")
        return out.split()

    def object_infos(self, names: list[str]) -> list[tuple[str, str] | None]:
        """Objects by name (`<commit>:<path>`, `<commit>^{tree}`) → (id, type), or None where there
        is none, asked of the long-lived `cat-file` in one pipelined batch."""
        plain = ["" if "\n" in n or "\0" in n else n for n in names]
        with self._lock:
            infos = iter(self._object_infos([n for n in plain if n]))
        return [next(infos) if n else None for n in plain]

    def tree_levels(self, trees: list[str]) -> list[dict[str, Entry]]:
        """The entries of each tree object (name → Entry), not those of the trees below it, in one
        pipelined `cat-file` batch."""
        with self._lock:
            found = self._read_objects([f"{t}^{{tree}}" for t in trees], "ls-tree")
        return [
            {
                name.decode(errors="surrogateescape"): Entry(mode, _KINDS.get(mode, "blob"), entry)
                for name, mode, entry in _tree_entries(data, len(oid) // 2)
            }
            for oid, _, data in found
        ]

    def tree_listing(self, tree: str) -> dict[str, Entry]:
        """Every entry under one tree object, recursively, paths relative to it (as `listing`
        lists a commit's, uncached: callers key their cache by the tree's id)."""
        with self._lock:
            return self._list_tree(tree)

    def merge_conflicts(self, ours: str, theirs: str) -> tuple[str, ...]:
        proc = self._run(
            "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, check=False
        )
        if proc.returncode not in (0, 1):
            raise GitError(f"git merge-tree failed: {proc.stderr.decode(errors='replace').strip()}")
        lines = proc.stdout.decode(errors="replace").splitlines()
        return tuple(dict.fromkeys(line for line in lines[1:] if line))

    def tags(self) -> tuple[str, ...]:
        return tuple(self._out("for-each-ref", "--format=%(refname:short)", "refs/tags").split())

    def refs(self, pattern: str) -> dict[str, str]:
        """Ref name → commit sha for refs matching `pattern` (e.g. `refs/pull/*/head`)."""
        out = self._out("for-each-ref", "--format=%(objectname) %(refname)", pattern)
        return {name: sha for sha, name in (line.split(" ", 1) for line in out.splitlines())}

    def ref_tips(self, *patterns: str, merged_into: str | None = None) -> dict[str, RefTip]:
        """Ref name → its commit and committer date, for the refs matching `patterns`, in one
        `for-each-ref`; with `merged_into`, only the refs whose tip that commit contains."""
        merged = [f"--merged={merged_into}"] if merged_into else []
        fmt = "--format=%(objectname) %(committerdate:unix) %(refname)"
        out = self._out("for-each-ref", *merged, fmt, "--", *patterns)
        tips = {}
        for line in out.splitlines():
            sha, date, name = line.split(" ", 2)
            tips[name] = RefTip(sha, int(date or 0))  # no date: not a commit
        return tips

    def first_parent_subjects(self, rev: str, max_count: int) -> tuple[str, ...]:
        """The subjects of `rev`'s first-parent history, newest first, at most `max_count`."""
        out = self._out("log", "--first-parent", f"--max-count={max_count}", "--format=%s", rev)
        return tuple(out.splitlines())

    def first_parent_log(
        self, rev: str, since: int | None = None, max_count: int | None = None
    ) -> list[LogEntry]:
        """`rev`'s first-parent history, newest first, each commit with the paths it changed
        against its first parent (a merge's too), in one `git log`."""
        args = ["log", "--first-parent", "--diff-merges=first-parent", "--name-only", "-z"]
        args += [f"--since=@{since}"] if since is not None else []
        args += [f"--max-count={max_count}"] if max_count is not None else []
        return parse_first_parent_log(self._run(*args, LOG_FORMAT, "--end-of-options", rev).stdout)

    def default_branch(self) -> str | None:
        """The remote's default branch (`origin/HEAD`), else the repository's HEAD branch."""
        for args in (
            ("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"),
            ("symbolic-ref", "--quiet", "--short", "HEAD"),
        ):
            proc = self._run(*args, check=False)
            if proc.returncode == 0 and proc.stdout.strip():
                return proc.stdout.decode().strip()
        return None

    def log(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> tuple[Commit, ...]:
        args = ["log", f"--max-count={max_count}", "--format=%H%x00%s%x00%B%x1e", rev_range]
        if path:
            args += ["--", path]
        out = self._out(*args)
        commits = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if record:
                sha, subject, body = record.split("\x00", 2)
                commits.append(Commit(sha=sha, subject=subject, message=body.strip()))
        return tuple(commits)

    def changes(self, a: str, b: str) -> tuple[ChangedFile, ...]:
        """Files changed from `a` to `b` with added/removed line numbers (rename-aware)."""
        return parse_diff(self._run(*_DIFF, a, b).stdout)

    def changes_from_merge_base(self, a: str, b: str) -> tuple[ChangedFile, ...] | None:
        """`changes(merge_base(a, b), b)` in one git process, so it need not wait for the merge
        base; None when there is no single merge base (none, or several: ask `merge_base`)."""
        proc = self._run(*_DIFF, "--merge-base", a, b, check=False)
        if proc.returncode != 0:
            return None
        return parse_diff(proc.stdout)

    # -- trees and blobs --------------------------------------------------------------------------

    def tree(self, commit: str) -> GitTree:
        return GitTree(self, commit)

    def listing(self, commit: str) -> dict[str, Entry]:
        """Every entry of the commit's tree, recursively: path → Entry. Cached per commit (bounded)."""
        cached = self._listings.get(commit)
        if cached is not None:
            return cached
        with self._lock:
            listing = self._list_tree(commit)
        self._listings.put(commit, listing)
        return listing

    def _list_tree(self, commit: str) -> dict[str, Entry]:
        """What `git ls-tree -r -t --full-tree` lists (the same entries, modes and order), read as
        tree objects through the long-lived `cat-file --batch`: a level of directories is one
        request, where `ls-tree` would be one more process. The caller holds the lock."""
        if "\n" in commit or "\0" in commit:  # would split a request line
            raise GitError(f"git ls-tree failed: not a valid object name {commit!r}")
        ((root, _, data),) = self._read_objects([f"{commit}^{{tree}}"], "ls-tree")
        same = self._tree_listings.get(root)
        if same is not None:
            return same  # another commit of the same files (a squash merge of a PR's head)
        width = len(root) // 2  # bytes of an object id in a tree (SHA-1 or SHA-256)
        trees = {root: self._subtree(root, data, width)}
        level = [root]
        while level:  # one level of directories at a time, each read once
            below = {
                oid: None
                for parent in level
                for _, mode, oid in trees[parent]
                if mode == _TREE and oid not in trees
            }
            # A directory an earlier listing read has the same id when unchanged: not read again.
            missing = [oid for oid in below if not self._known_subtree(oid, trees)]
            if missing:
                for oid, (_, _, data) in zip(
                    missing, self._read_objects(missing, "ls-tree"), strict=True
                ):
                    trees[oid] = self._subtree(oid, data, width)
            level = list(below)
        listing: dict[str, Entry] = {}
        # Depth first, a directory before what it holds, as `ls-tree -r -t` lists them.
        stack = [(b"", iter(trees[root]))]
        while stack:
            prefix, entries = stack[-1]
            item = next(entries, None)
            if item is None:
                stack.pop()
                continue
            name, mode, oid = item
            path = prefix + name
            listing[path.decode(errors="surrogateescape")] = Entry(
                mode, _KINDS.get(mode, "blob"), oid
            )
            if mode == _TREE:
                stack.append((path + b"/", iter(trees[oid])))
        self._tree_listings.put(root, listing)
        return listing

    def _subtree(self, oid: str, data: bytes, width: int) -> list[tuple[bytes, str, str]]:
        entries = _tree_entries(data, width)
        self._subtrees.put(oid, entries)
        return entries

    def _known_subtree(self, oid: str, trees: dict[str, list[tuple[bytes, str, str]]]) -> bool:
        known = self._subtrees.get(oid)
        if known is not None:
            trees[oid] = known
        return known is not None

    def clear_listings(self) -> None:
        """Forget cached tree listings and blobs (benchmarks measure a cold review)."""
        self._listings.clear()
        self._file_paths.clear()
        self._tree_listings.clear()
        self._subtrees.clear()
        self._blobs.clear()

    def file_paths(self, commit: str) -> tuple[str, ...]:
        """The paths of the commit's files (no directories), sorted. Cached per commit: checks ask
        for a directory's files thousands of times a review, each a range of this."""
        found = self._file_paths.get(commit)
        if found is None:
            listing = self.listing(commit)
            found = tuple(sorted(p for p, e in listing.items() if e.kind != "tree"))
            self._file_paths.put(commit, found)
        return found

    def object_id(self, commit: str, path: str) -> str | None:
        proc = self._run(
            "rev-parse",
            "--verify",
            "--quiet",
            f"{commit}:{path}" if path else f"{commit}^{{tree}}",
            check=False,
        )
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

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

    def _read_objects(self, names: list[str], command: str = "") -> list[tuple[str, str, bytes]]:
        """Objects by name (id, type, content) through the long-lived `cat-file --batch`, requests
        pipelined in chunks small enough to sit in the pipe's buffer (so neither side can block the
        other). The caller holds the lock."""
        out: list[tuple[str, str, bytes]] = []
        if not names:
            return out
        batch = self._batch_process()
        assert batch.stdin is not None and batch.stdout is not None
        for chunk, request in _requests(b"contents", names):
            batch.stdin.write(request)
            batch.stdin.flush()
            missing = None
            for name in chunk:  # every reply is read, so the next request starts in step
                header = _found(batch.stdout.readline())
                if header is None:
                    missing = missing or name
                    continue
                out.append((header[0], header[1], batch.stdout.read(int(header[2]))))
                batch.stdout.read(1)  # the newline after each object
            if missing is not None:
                failed = f"git {command} failed: " if command else ""
                raise GitError(f"{failed}object {missing} is missing")
        return out

    def _object_infos(self, names: list[str]) -> list[tuple[str, str] | None]:
        """Objects by name (id, type) through the long-lived `cat-file`, None for one it does not
        find (or finds ambiguous). The caller holds the lock."""
        if not names:
            return []
        batch = self._batch_process()
        assert batch.stdin is not None and batch.stdout is not None
        out: list[tuple[str, str] | None] = []
        for chunk, request in _requests(b"info", names):
            batch.stdin.write(request)
            batch.stdin.flush()
            for _ in chunk:
                header = _found(batch.stdout.readline())
                out.append((header[0], header[1]) if header is not None else None)
        return out

    def _batch_process(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", "--batch-command", "--buffer"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_GIT_ENV,
            )
        return self._batch


def _requests(command: bytes, names: list[str]) -> Iterator[tuple[list[str], bytes]]:
    """`names` in chunks, each with its request for `cat-file --batch-command --buffer`: the
    command for each name, then `flush` (git holds its replies back until then, so they come in
    few writes rather than one per object)."""
    chunk: list[str] = []
    lines: list[bytes] = []
    size = 0
    for name in names:
        line = command + b" " + name.encode(errors="surrogateescape") + b"\n"
        if chunk and size + len(line) > _BATCH_CHUNK_BYTES:
            yield chunk, b"".join(lines) + b"flush\n"
            chunk, lines, size = [], [], 0
        chunk.append(name)
        lines.append(line)
        size += len(line)
    if chunk:
        yield chunk, b"".join(lines) + b"flush\n"


def _found(line: bytes) -> list[str] | None:
    """`cat-file`'s reply header as (id, type, size), or None for `<name> missing` (or
    `ambiguous`), whatever the name holds."""
    header = line.decode(errors="replace").split()
    return header if len(header) == 3 and header[2].isdigit() else None


_TREE = "040000"
_KINDS = {_TREE: "tree", SUBMODULE: "commit"}


def _tree_entries(data: bytes, width: int) -> list[tuple[bytes, str, str]]:
    """A tree object's entries (name, mode, id), modes written as `ls-tree` writes them: git's
    canonical mode for each kind, six octal digits."""
    entries = []
    pos, end = 0, len(data)
    while pos < end:
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        entries.append(
            (
                data[space + 1 : nul],
                _canonical_mode(data[pos:space]),
                data[nul + 1 : nul + 1 + width].hex(),
            )
        )
        pos = nul + 1 + width
    return entries


def _canonical_mode(raw: bytes) -> str:
    mode = int(raw, 8)
    kind = mode & 0o170000
    if kind == 0o100000:  # a file: executable or not, whatever else the mode says
        return "100755" if mode & 0o100 else "100644"
    return {0o120000: SYMLINK, 0o040000: _TREE}.get(kind, SUBMODULE)


class GitTree:
    """The files of a repository at one commit (the `Tree` protocol of bot.engine.context)."""

    def __init__(self, repo: GitRepo, commit: str) -> None:
        self.repo = repo
        self.commit = commit
        self._listing: dict[str, Entry] | None = None

    def entry(self, path: str) -> Entry | None:
        # The listing held once asked: a review reads tens of thousands of entries.
        if self._listing is None:
            self._listing = self.repo.listing(self.commit)
        return self._listing.get(path)

    def read(self, path: str) -> bytes | None:
        entry = self.entry(path)
        if entry is None or entry.kind != "blob" or entry.mode == SYMLINK:
            return None
        return self.repo.blob(entry.oid)

    def text(self, path: str) -> str | None:
        data = self.read(path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def read_many(self, paths: Sequence[str]) -> list[bytes | None]:
        """`read` of each path, the blobs in one request to the long-lived cat-file: an index of
        every file of a tree (checks/headings/index.py) reads thousands at once."""
        listing = self.repo.listing(self.commit)
        entries = [listing.get(p) for p in paths]
        wanted = [
            e.oid for e in entries if e is not None and e.kind == "blob" and e.mode != SYMLINK
        ]
        blobs = iter(self.repo.blobs(wanted))
        return [
            next(blobs) if e is not None and e.kind == "blob" and e.mode != SYMLINK else None
            for e in entries
        ]

    def paths(self, prefix: str = "") -> tuple[str, ...]:
        files = self.repo.file_paths(self.commit)
        if prefix in ("", "."):
            return files
        lead = prefix.rstrip("/") + "/"
        # Sorted, so the paths under `lead` are one run: from the first >= lead to the first
        # past every string that starts with it.
        start = bisect.bisect_left(files, lead)
        end = bisect.bisect_left(files, lead[:-1] + chr(ord("/") + 1), lo=start)
        return files[start:end]

    def tree_id(self, directory: str) -> str | None:
        if directory in ("", "."):
            return self.repo.object_id(self.commit, "")
        entry = self.entry(directory.rstrip("/"))
        return entry.oid if entry is not None and entry.kind == "tree" else None


_DIFF = (
    "-c",
    "core.quotePath=false",
    "diff",
    "--no-color",
    "--no-ext-diff",
    *DIFF_FORMAT,
    "-M",
    "--no-textconv",
)
# git must never prompt, page, or read the user's config in ways that change its output.
_GIT_ENV = {
    **os.environ,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
}
