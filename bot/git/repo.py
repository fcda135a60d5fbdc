"""git objects at any commit, read without touching a work tree (bare or not).

Everything goes through `git` itself: one long-lived `cat-file --batch` per repository for blobs,
tree listings and ref lookups, and plain commands for the rest (diffs, merge bases, logs). Turning a
chart directory into an archive for Helm is bot/charts/archive.py's job."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Collection, Iterator, Sequence, Sized
from pathlib import Path
from typing import IO

from bot.errors import ChartReviewError
from bot.git.diff import DIFF_FORMAT, parse_diff
from bot.git.fork_points import ForkPoint, fork_points
from bot.git.history import LOG_FORMAT, LogEntry, parse_first_parent_log
from bot.git.objects import OBJECT_ID_RE, ChangedFile, Commit
from bot.git.subtree import Subtree, subtrees
from bot.git.tree import Entry, GitTree, Level, parse_tree
from bot.lru import BoundedCache
from bot.textlines import git_lines

# 2100-01-01T00:00Z: git's dates end before it (its tm_to_time_t reads years 1970-2099).
GIT_DATES_END = 4_102_444_800
# Requests go to the long-lived `cat-file` in chunks that fit in a pipe's buffer (64 KiB on Linux),
# so writing one never waits on git, which may be writing replies that are only read afterwards.
_BATCH_CHUNK_BYTES = 16 << 10
# The directories `dirs_holding` answers at most: more charts than any repository holds.
_HOLDING_MAX = 100_000
# The entries `tree_listing` lists at most: fifty times a large chart repository's files. A tree
# naming one subtree under many names multiplies its paths at each level; listed path by path, a
# few objects would fill the memory.
_LISTING_MAX = 500_000
# A tag name asked of `cat-file` as `refs/tags/NAME`: nothing that would read as a revision's syntax.
_TAG_NAME_RE = re.compile(r"[A-Za-z0-9._+-][A-Za-z0-9._+/-]*")
# First-parent lines kept, in commits: a few integration branches' tips, 5,000 commits each.
_LINE_COMMITS = 20_000
# A full object id (SHA-1 or SHA-256): what names one commit for good, unlike a ref.
# Git abbreviates an object id to 4 hex digits at the least.
_ABBREVIATION_RE = re.compile("[0-9a-fA-F]{4}")
# Trees kept, counted in entries (~200 bytes each): one level of each directory object, enough for
# every directory of a few trees of a 10,000-file repository; recursive listings of trees and the
# sorted files under them (a few whole trees, and the many chart directories read of other heads).
_LEVEL_ENTRIES = 200_000
_LISTED_ENTRIES = 300_000
_ROOTS = 100_000  # commits' tree ids (two short strings each)
# Blobs by id never change, and base and head share most of them (a PR changes a few files): a
# worker keeps the recent ones, up to this many bytes in all, none larger than the second.
_BLOB_BYTES, _BLOB_MAX = 32 << 20, 1 << 20


class GitError(ChartReviewError):
    """A git command failed; the message names the command and git's reason."""


# Every long-lived `cat-file` of this process, its repository's or one whose repository is gone:
# what close_all() ends, so that a command line leaves no git process of its own to whoever adopts
# orphans (a zombie under its init).
_BATCHES: set[subprocess.Popen[bytes]] = set()
_BATCHES_LOCK = threading.Lock()


def close_all() -> None:
    """Ends and reaps every long-lived git process this process started."""
    with _BATCHES_LOCK:
        batches = list(_BATCHES)
        _BATCHES.clear()
    for batch in batches:
        _end(batch)


def _end(batch: subprocess.Popen[bytes]) -> None:
    if batch.poll() is None:
        batch.kill()
    batch.wait()


class GitRepo:
    """One repository on disk. Thread-safe for reads."""

    def __init__(self, path: str | os.PathLike[str], *, checked: bool = False) -> None:
        """`checked`: the path is known to be a repository (another GitRepo's), not asked again."""
        self.path = Path(path)
        self._lock = threading.Lock()
        self._batch: subprocess.Popen[bytes] | None = None
        self._git_dir: Path | None = None
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
        self._lines: BoundedCache[tuple[str, int], tuple[tuple[str, str], ...]] = BoundedCache(
            _LINE_COMMITS, len
        )
        # Which paths conflict merging one commit into another: a fact of the two ids.
        self._conflicts: BoundedCache[tuple[str, str], tuple[str | None, tuple[str, ...]]] = (
            BoundedCache(_ROOTS)
        )
        if not checked and self._run("rev-parse", "--git-dir", check=False).returncode != 0:
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
            raise _failed(args[0], proc.returncode, proc.stderr)
        return proc

    def _out(self, *args: str) -> str:
        return self._run(*args).stdout.decode(errors="replace")

    def close(self) -> None:
        with self._lock:
            if self._batch is not None:
                with _BATCHES_LOCK:
                    _BATCHES.discard(self._batch)
                _end(self._batch)
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
        # Asked again: what could be an abbreviated id. A long-lived git sees refs, packs and
        # loose objects made since it started, but expands an abbreviation from a listing of loose
        # objects it may have cached before; a name it does not find (`main` where there is only
        # `master`, as the integration branch's candidates are asked every review) is not there.
        again = [r for r in wanted if r not in found and _ABBREVIATION_RE.search(r)]
        if again:
            found.update(self._resolve_each(again))
        return {r: found.get(r) for r in wanted}

    def _resolve_each(self, refs: list[str]) -> dict[str, str | None]:
        """`resolve` for several refs in one new git process (`cat-file --batch-check`)."""
        plain = [r for r in refs if "\n" not in r and "\0" not in r]
        found: dict[str, str | None] = {r: self.resolve(r) for r in refs if r not in plain}
        if plain:
            request = "".join(f"{r}^{{commit}}\n" for r in plain).encode()
            proc = self._run(
                "cat-file", "--batch-check=%(objectname) %(objecttype)", input=request, check=False
            )
            lines = git_lines(proc.stdout.decode(errors="replace"))
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
        for line in git_lines(proc.stdout.decode()):
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
        return subtrees(self, directory, commits, read)

    def first_parent_positions(
        self, rev: str, wanted: Collection[str], max_count: int
    ) -> dict[str, int]:
        """Where each of `wanted` is on `rev`'s first-parent line (0: `rev`), for those among its
        newest `max_count` commits: from the line when it is remembered, else read only as deep
        as the oldest of them (fork points are mostly recent; the line is thousands deep)."""
        if OBJECT_ID_RE.fullmatch(rev) and (known := self._lines.get((rev, max_count))):
            return {sha: n for n, (sha, _) in enumerate(known) if sha in wanted}
        found: dict[str, int] = {}
        args = ["rev-list", "--first-parent", f"--max-count={max_count}", "--end-of-options", rev]
        for n, sha in enumerate(self._streamed([*args, "--"], b"\n")):
            if sha in wanted:
                found[sha] = n
                if len(found) == len(wanted):
                    break
        return found

    def first_parent_subjects(self, rev: str, max_count: int) -> tuple[str, ...]:
        """The subjects of `rev`'s first-parent history, newest first, at most `max_count`."""
        return tuple(subject for _, subject in self.first_parent_line(rev, max_count))

    def first_parent_line(self, rev: str, max_count: int) -> tuple[tuple[str, str], ...]:
        """(commit, subject) along `rev`'s first-parent history, newest first, at most
        `max_count`, in one `git log`. A commit's history never changes: asked by its id, the
        line is remembered, as open-PR discovery reads its subjects and the fork points its ids."""
        key = (rev, max_count)
        if OBJECT_ID_RE.fullmatch(rev) and (known := self._lines.get(key)) is not None:
            return known
        out = self._out(
            "log",
            "--first-parent",
            f"--max-count={max_count}",
            "--format=%H %s",
            "--end-of-options",
            rev,
            "--",
        )
        line = tuple(
            (sha, subject) for sha, _, subject in (r.partition(" ") for r in git_lines(out))
        )
        if OBJECT_ID_RE.fullmatch(rev):
            self._lines.put(key, line)
        return line

    def object_infos(self, names: list[str]) -> list[tuple[str, str] | None]:
        """Objects by name (`<commit>:<path>`, `<commit>^{tree}`) → (id, type), or None where there
        is none, asked of the long-lived `cat-file` in one pipelined batch."""
        plain = ["" if "\n" in n or "\0" in n else n for n in names]
        with self._lock:
            infos = iter(self._object_infos([n for n in plain if n]))
        return [next(infos) if n else None for n in plain]

    def merge_conflicts(self, ours: str, theirs: str) -> tuple[str, ...]:
        """The paths that conflict merging `theirs` into `ours` (`git merge-tree`), remembered
        when both are commit ids."""
        return self._merge(ours, theirs)[1]

    def merge_changes(self, ours: str, theirs: str, path: str) -> bool:
        """Whether merging `theirs` into `ours` changes anything under the directory `path` ("."
        the whole tree): False where `ours` already has every change `theirs` makes there (the
        same change landed another way), True where the merge conflicts."""
        tree, conflicts = self._merge(ours, theirs)
        if conflicts or tree is None:
            return True
        if path in ("", "."):
            merged, before = self.root_trees([tree, ours])
        else:
            merged, before = self.directory_trees([tree, ours], path)
        return merged != before

    def _merge(self, ours: str, theirs: str) -> tuple[str | None, tuple[str, ...]]:
        if not (OBJECT_ID_RE.fullmatch(ours) and OBJECT_ID_RE.fullmatch(theirs)):
            return self._merged(ours, theirs)
        return self._conflicts.get_or_make((ours, theirs), lambda: self._merged(ours, theirs))

    def _merged(self, ours: str, theirs: str) -> tuple[str | None, tuple[str, ...]]:
        """The merged tree's id and the conflicting paths, as `git merge-tree` writes them."""
        proc = self._run(
            "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, check=False
        )
        if proc.returncode not in (0, 1):
            raise GitError(f"git merge-tree failed: {proc.stderr.decode(errors='replace').strip()}")
        lines = git_lines(proc.stdout.decode(errors="replace"))
        tree = lines[0].strip() if lines and OBJECT_ID_RE.fullmatch(lines[0].strip()) else None
        return tree, tuple(dict.fromkeys(line for line in lines[1:] if line))

    def tags(self) -> tuple[str, ...]:
        return tuple(self._out("for-each-ref", "--format=%(refname:short)", "refs/tags").split())

    def tagged(self, names: Sequence[str]) -> tuple[str, ...]:
        """Those of `names` that are tags, looked up in the long-lived `cat-file`: a release
        repository holds thousands of tags, which `tags` lists in a process of its own each time."""
        plain = [n for n in dict.fromkeys(names) if _TAG_NAME_RE.fullmatch(n)]
        with self._lock:
            infos = self._object_infos([f"refs/tags/{n}" for n in plain])
        return tuple(n for n, info in zip(plain, infos, strict=True) if info is not None)

    def refs(self, *patterns: str, merged_into: str | None = None) -> dict[str, str]:
        """Ref name → object id for the refs matching `patterns` (e.g. `refs/pull/*/head`, or
        `refs/pull` for all under it), in one `for-each-ref`; with `merged_into`, only the refs
        whose tip that commit contains."""
        merged = [f"--merged={merged_into}"] if merged_into else []
        out = self._out(
            "for-each-ref", *merged, "--format=%(objectname) %(refname)", "--", *patterns
        )
        return {name: sha for sha, name in (line.split(" ", 1) for line in git_lines(out))}

    def tag_commits(
        self, *patterns: str, merged_into: str | None = None, newest: int | None = None
    ) -> list[tuple[str, str]]:
        """(tag name, the commit it points at) for the tags matching `patterns` (globs under
        `refs/tags/`), newest first by creation date; with `merged_into`, only those that commit
        contains; with `newest`, at most that many."""
        merged = [f"--merged={merged_into}"] if merged_into else []
        count = [f"--count={newest}"] if newest else []
        out = self._out(
            "for-each-ref",
            *merged,
            *count,
            "--sort=-creatordate",
            "--format=%(objectname) %(*objectname) %(refname:lstrip=2)",
            "--",
            *(f"refs/tags/{p}" for p in patterns),
        )
        found = []
        for line in git_lines(out):
            sha, peeled, name = line.split(" ", 2)
            found.append((name, peeled or sha))
        return found

    def first_parents(self, shas: Sequence[str]) -> dict[str, tuple[str | None, int]]:
        """Each commit's first parent (None for a root) and committer date, read through the
        long-lived `cat-file`; an object that is no commit is left out."""
        wanted = [sha for sha in dict.fromkeys(shas) if OBJECT_ID_RE.fullmatch(sha)]
        with self._lock:
            objects = self._read_objects(wanted)
        found = {}
        for sha, (_, kind, data) in zip(wanted, objects, strict=True):
            if kind == "commit":
                header = data.partition(b"\n\n")[0]
                parent = next(
                    (ln[7:].decode() for ln in header.split(b"\n") if ln.startswith(b"parent ")),
                    None,
                )
                found[sha] = (parent, _committer_date(data))
        return found

    def upstreams(self) -> dict[str, str]:
        """Local branch ref → the ref it tracks (`refs/remotes/origin/x`), for those that do."""
        out = self._out("for-each-ref", "--format=%(refname)%00%(upstream)", "refs/heads")
        pairs = (line.split("\0", 1) for line in git_lines(out) if "\0" in line)
        return {ref: upstream for ref, upstream in pairs if upstream}

    def object_sizes(self, names: list[str]) -> list[int | None]:
        """Each object's size in bytes (`<commit>:<path>` names a blob), None where there is none:
        asked before a blob that may be large is read."""
        plain = ["" if "\n" in n or "\0" in n else n for n in names]
        with self._lock:
            batch = self._batch_process()
            assert batch.stdin is not None and batch.stdout is not None
            asked = [n for n in plain if n]
            sizes: list[int | None] = []
            for chunk, request in _requests(b"info", asked):
                batch.stdin.write(request)
                batch.stdin.flush()
                for _ in chunk:
                    header = _found(batch.stdout.readline())
                    sizes.append(int(header[2]) if header is not None else None)
        it = iter(sizes)
        return [next(it) if n else None for n in plain]

    def shallow_commits(self) -> frozenset[str]:
        """The commits whose parents a shallow clone does not have (none in a full one), read
        from git's `shallow` file at each call: a fetch may deepen the clone at any time."""
        if self._git_dir is None:
            found = Path(self._out("rev-parse", "--git-dir").strip())
            self._git_dir = found if found.is_absolute() else self.path / found
        try:
            return frozenset((self._git_dir / "shallow").read_text().split())
        except OSError:
            return frozenset()

    def commit_dates(self, shas: Sequence[str]) -> dict[str, int]:
        """Each commit's committer date (seconds since the epoch), 0 for an object that is no
        commit, read through the long-lived `cat-file`: for the few refs whose age matters, where
        asking `for-each-ref` for dates reads the commit of every ref (thousands on a mirror)."""
        wanted = [sha for sha in dict.fromkeys(shas) if OBJECT_ID_RE.fullmatch(sha)]
        with self._lock:
            objects = self._read_objects(wanted)
        return {
            sha: _committer_date(data) if kind == "commit" else 0
            for sha, (_, kind, data) in zip(wanted, objects, strict=True)
        }

    def first_parent_log(
        self, rev: str, since: int | None = None, max_count: int | None = None
    ) -> list[LogEntry]:
        """`rev`'s first-parent history, newest first, each commit with the paths it changed
        against its first parent (a merge's too), in one `git log`; with `since`, the commits
        committed at or after it."""
        args = [*_FIRST_PARENT_PATHS]
        # git reads no date from 2100 on and then ignores --since, listing everything: the
        # entries are held to `since` here whatever git did, its --since only saving the walk.
        args += [f"--since=@{since}"] if since is not None and since < GIT_DATES_END else []
        args += [f"--max-count={max_count}"] if max_count is not None else []
        entries = parse_first_parent_log(
            self._run(*args, LOG_FORMAT, "--end-of-options", rev).stdout
        )
        return entries if since is None else [e for e in entries if e.date >= since]

    def first_parent_changes(self, rev: str, depth: int, path: str) -> list[LogEntry]:
        """What `first_parent_log(rev, max_count=depth)` lists of the commits that change files
        under the directory `path` ("." the whole tree), each with those files only: the walk reads
        that directory of each commit, not the whole tree's diff (and, with a commit-graph, its
        Bloom filters), a few milliseconds where the whole log takes tens on a busy repository.
        `rev~depth` bounds the walk exactly as `--max-count` did (history shorter: no bound)."""
        bound = f"{rev}~{depth}"
        older = self.resolve_many([bound]).get(bound)
        args = [
            *_FIRST_PARENT_PATHS,
            LOG_FORMAT,
            "--end-of-options",
            rev,
            *([f"^{older}"] if older else []),
            "--",
        ]
        args += [] if path in ("", ".") else [f":(literal){path}"]
        return parse_first_parent_log(self._run(*args).stdout)

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
        return tuple(self.commits(rev_range, path, max_count))

    def commits(
        self, rev_range: str, path: str | None = None, max_count: int = 200
    ) -> Iterator[Commit]:
        """`log`, read as git writes it, and git stopped when the caller stops: a caller that
        needs the newest few commits touching a path waits for those, not for git's walk of the
        whole history (tens of milliseconds on a mirror of thousands of commits)."""
        args = ["log", f"--max-count={max_count}", f"--format={_COMMIT_FORMAT}", rev_range]
        args += ["--", path] if path else []
        return (_commit(record) for record in self._streamed(args, b"\x1e"))

    def _streamed(self, args: Sequence[str], separator: bytes) -> Iterator[str]:
        """The output of `git args`, in pieces ending at `separator`, each once git has written
        it; dropping the iterator stops git (a caller's loop that breaks does)."""
        proc = subprocess.Popen(
            ["git", "-C", str(self.path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_GIT_ENV,
        )
        assert proc.stdout is not None and proc.stderr is not None
        try:
            yield from _pieces(proc.stdout, separator)
            if proc.wait() != 0:
                raise _failed(args[0], proc.returncode, proc.stderr.read())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stderr.close()

    def fork_log(
        self, target: str, head: str, max_count: int
    ) -> tuple[tuple[Commit, ...], str | None]:
        """The commits `head` adds to `target` (`log target..head`, at most `max_count`) and their
        merge base, in one git process: the boundary `--boundary` names is the merge base when it
        is one commit, as every common ancestor is reached from `head` through it; no commit at all
        means `head` is in `target`, its own merge base. None for the merge base where the boundary
        says nothing sure (several commits, none, or a list cut at `max_count`): ask `merge_base`.
        With one merge base, `target..head` is `merge_base..head`."""
        args = ["log", "--boundary", f"--max-count={max_count}", f"--format=%m{_COMMIT_FORMAT}"]
        commits: list[Commit] = []
        boundary: list[Commit] = []
        for mark, commit in _log_records(self._out(*args, f"{target}..{head}")):
            (boundary if mark == "-" else commits).append(commit)
        if not commits and not boundary:
            return (), head
        sure = len(boundary) == 1 and len(commits) < max_count
        return tuple(commits), boundary[0].sha if sure else None

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
        """Forget cached trees, blobs and histories (benchmarks measure a cold review)."""
        caches = (self._roots, self._dirs, self._levels, self._tree_listings, self._file_paths)
        for cache in (*caches, self._holding, self._lines, self._conflicts):
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
            ended, self._batch = (
                self._batch,
                subprocess.Popen(
                    ["git", "-C", str(self.path), "cat-file", "--batch-command", "--buffer"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=_GIT_ENV,
                ),
            )
            with _BATCHES_LOCK:
                _BATCHES.discard(ended)
                _BATCHES.add(self._batch)
        return self._batch


def _plain_path(path: str) -> bool:
    """A path as tree entries name it: no empty, "." or ".." part (which `<commit>:<path>` would
    read relative to the working directory), no line break or NUL (which end a request)."""
    parts = path.split("/")
    return all(p not in ("", ".", "..") for p in parts) and "\n" not in path and "\0" not in path


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


def _weight(entries: Sized) -> int:
    return 1 + len(entries)


# A commit per record: id, subject, message (`%m`, the boundary's mark, may lead it).
_COMMIT_FORMAT = "%H%x00%s%x00%B%x1e"


def _log_records(out: str) -> Iterator[tuple[str, Commit]]:
    """(mark, commit) for each record of a log in `%m` + _COMMIT_FORMAT."""
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if record:
            yield record[0], _commit(record[1:])


def _pieces(stream: IO[bytes], separator: bytes) -> Iterator[str]:
    """What `stream` says, in pieces ending at `separator` (a log's records, a list's lines),
    each once it is whole; empty ones left out."""
    pending = b""
    while chunk := stream.read1(1 << 16):  # type: ignore[attr-defined]
        *whole, pending = (pending + chunk).split(separator)
        for piece in whole:
            if text := piece.decode(errors="replace").strip("\n"):
                yield text
    if text := pending.decode(errors="replace").strip("\n"):
        yield text


def _commit(record: str) -> Commit:
    sha, subject, body = record.split("\x00", 2)
    return Commit(sha=sha, subject=subject, message=body.strip())


def _committer_date(commit: bytes) -> int:
    """The date on a commit object's `committer` line: `committer NAME <EMAIL> SECONDS ZONE`."""
    header, _, _ = commit.partition(b"\n\n")
    for line in header.split(b"\n"):
        if line.startswith(b"committer "):
            seconds = line.rsplit(b" ", 2)[-2]
            return int(seconds) if seconds.isdigit() else 0
    return 0


def _failed(command: str, returncode: int, stderr: bytes) -> GitError:
    lines = stderr.decode(errors="replace").strip().splitlines()
    # git's own reason, not the usage text it may print after it.
    said = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
    return GitError(f"git {command} failed: {said[-1] if said else 'exit ' + str(returncode)}")


# The paths each first-parent commit changed. Renames are not looked for: a moved file is its old
# path and its new one (a chart moved away is a chart removed), and looking would read the blobs of
# every added and deleted file in history (a mirror missing one fails the whole log).
_FIRST_PARENT_PATHS = (
    "log",
    "--first-parent",
    "--diff-merges=first-parent",
    "--name-only",
    "--no-renames",
    "-z",
)
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
