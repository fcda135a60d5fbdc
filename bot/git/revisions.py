"""A repository's refs and history: resolving names, merge bases and ancestry, logs and
first-parent lines, tags and refs, commit dates, merges simulated with `git merge-tree`, and the
files a range changed. A commit's history is a fact of its id: what is asked by id is remembered."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from bot.git.diff import DIFF_FORMAT, parse_diff
from bot.git.fork_points import ForkPoint, fork_points
from bot.git.history import LOG_FORMAT, LogEntry, parse_first_parent_log
from bot.git.listings import Listings
from bot.git.objects import OBJECT_ID_RE, ChangedFile, Commit
from bot.git.process import GitError
from bot.lru import BoundedCache
from bot.textlines import git_lines

# 2100-01-01T00:00Z: git's dates end before it (its tm_to_time_t reads years 1970-2099).
GIT_DATES_END = 4_102_444_800
# A tag name asked of `cat-file` as `refs/tags/NAME`: nothing that would read as a revision's syntax.
_TAG_NAME_RE = re.compile(r"[A-Za-z0-9._+-][A-Za-z0-9._+/-]*")
# First-parent lines kept, in commits: a few integration branches' tips, 5,000 commits each.
_LINE_COMMITS = 20_000
# A full object id (SHA-1 or SHA-256): what names one commit for good, unlike a ref.
# Git abbreviates an object id to 4 hex digits at the least.
_ABBREVIATION_RE = re.compile("[0-9a-fA-F]{4}")
# Merges simulated, remembered by the two commits' ids (a conflict is a fact of them).
_MERGES = 100_000


class Revisions(Listings):
    """Refs and history of one repository, on top of its trees (a simulated merge compares the
    merged tree with one side's)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path)
        self._git_dir: Path | None = None
        self._lines: BoundedCache[tuple[str, int], tuple[tuple[str, str], ...]] = BoundedCache(
            _LINE_COMMITS, len
        )
        # Which paths conflict merging one commit into another: a fact of the two ids.
        self._conflicts: BoundedCache[tuple[str, str], tuple[str | None, tuple[str, ...]]] = (
            BoundedCache(_MERGES)
        )

    def clear_listings(self) -> None:
        """Forget cached trees, blobs and histories (benchmarks measure a cold review)."""
        super().clear_listings()
        self._lines.clear()
        self._conflicts.clear()

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


# A commit per record: id, subject, message (`%m`, the boundary's mark, may lead it).
_COMMIT_FORMAT = "%H%x00%s%x00%B%x1e"


def _log_records(out: str) -> Iterator[tuple[str, Commit]]:
    """(mark, commit) for each record of a log in `%m` + _COMMIT_FORMAT."""
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if record:
            yield record[0], _commit(record[1:])


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
