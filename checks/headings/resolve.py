"""Where a heading reference leads: the named file at the PR head, the same file above or below,
or a linked repository's develop branch, and failing that an open PR whose head holds it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from bot.git.objects import GitView
from bot.model.context import Context, LinkedRepo, OpenPR, RepoResolver
from bot.model.links import bounded
from checks.headings.files import TreeFiles
from checks.headings.refs import FileRef, Reference
from checks.headings.text import Heading

SUGGESTIONS = 3
SUGGESTION_CUTOFF = 0.5
UNKNOWN_DEVELOP = "not checked: its develop branch is unknown"


@dataclass(frozen=True)
class Target:
    """What a reference finds in one tree."""

    kind: str  # resolved | missing | duplicated | ambiguous | no-file
    text: str  # the heading matched
    path: str
    lines: tuple[int, ...] = ()
    candidates: tuple[str, ...] = ()
    holders: tuple[str, ...] = ()
    suggestions: tuple[Heading, ...] = ()


@dataclass(frozen=True)
class Resolution:
    """A `Target`, or why there is none: `unverifiable` (no access), `merge-order` (only `pr` holds
    it), `no-file` (the named file is not there)."""

    kind: str
    file: str  # as a message names it: `path`, `owner/name:path`, `path above line 12`
    at: str  # " at the PR head", " on owner/name's develop"
    found: Target | None = None
    repo: str | None = None
    reason: str = ""
    pr: OpenPR | None = None


def target(files: TreeFiles, ref: Reference, from_path: str | None) -> Target:
    """Find the heading in the file `ref` names: exactly one candidate file, or, for a name several
    files share, the one file that holds the heading."""
    assert ref.file is not None
    name = ref.file.path
    paths = files.candidates(name, from_path)
    if not paths:
        return Target("no-file", ref.text, name)
    found = {p: files.lines_of(p, ref.text, ref.loose) for p in paths}
    holders = tuple(p for p, (_, lines) in found.items() if lines)
    if not holders and (text_at := as_text(files, ref, paths, from_path)):
        return text_at
    if len(paths) > 1 and len(holders) != 1:
        return Target("ambiguous", ref.text, name, candidates=paths, holders=holders)
    path = holders[0] if holders else paths[0]
    text, lines = found[path]
    kind = count_kind(lines)
    suggestions = closest(files.headings(path), ref.text) if kind == "missing" else ()
    return Target(kind, text, path, lines, suggestions=suggestions)


def as_text(
    files: TreeFiles, ref: Reference, paths: tuple[str, ...], from_path: str | None
) -> Target | None:
    """The first file that holds the quoted words as text though not as a heading: a log line, a
    message, a phrase of prose. Quoting what a file says is no heading reference, so never a
    failure (`WARNING  EGRESS LOCKDOWN NOT ENFORCED` echoed by the script it names)."""
    for path in paths:
        besides = ref.line if path == from_path else None
        if lines := files.text_lines(path, ref.text, besides):
            return Target("as-text", ref.text, path, lines)
    return None


def count_kind(lines: tuple[int, ...]) -> str:
    return "resolved" if len(lines) == 1 else "duplicated" if lines else "missing"


def closest(headings: tuple[Heading, ...], text: str) -> tuple[Heading, ...]:
    texts = list(dict.fromkeys(h.text for h in headings))
    close = difflib.get_close_matches(text, texts, n=SUGGESTIONS, cutoff=SUGGESTION_CUTOFF)
    return tuple(next(h for h in headings if h.text == c) for c in close)


@dataclass(frozen=True)
class LinkedTree:
    """A linked repository read at one commit, and its open PRs."""

    files: TreeFiles
    where: str  # " on owner/name's develop"
    git: GitView
    open_prs: tuple[OpenPR, ...]


@dataclass
class Resolver:
    """Resolves the references of one review, reading each tree and linked repository once.

    Other repositories are asked for through the config's allow-list and cap (`links:` at base),
    whoever provides them: the App applies both itself too, `--link` relies on this."""

    ctx: Context
    head: TreeFiles
    _linked: dict[str, LinkedRepo] = field(default_factory=dict)
    _trees: dict[tuple[int, str], TreeFiles] = field(default_factory=dict)
    _links: RepoResolver | None = None

    def resolve(self, ref: Reference, from_path: str | None) -> Resolution:
        if ref.side is not None and from_path is not None:
            return self.beside(ref, from_path)
        assert ref.file is not None
        if ref.file.repo is None:
            return self.local(ref, ref.file, from_path)
        return self.linked(ref, ref.file.repo, ref.file)

    def beside(self, ref: Reference, path: str) -> Resolution:
        assert ref.line is not None
        text, lines = self.head.lines_of(path, ref.text, ref.loose)
        above = ref.side == "above"
        near = tuple(n for n in lines if (n < ref.line if above else n > ref.line))
        found = Target(count_kind(near), text, path, near)
        if not near and (text_at := as_text(self.head, ref, (path,), path)):
            found = text_at
        return Resolution(found.kind, f"{path} {ref.side} line {ref.line}", "", found)

    def local(self, ref: Reference, file: FileRef, from_path: str | None) -> Resolution:
        found = target(self.head, ref, from_path)
        at = " at the PR head"
        if found.kind == "missing" and (
            pr := self.holding_pr(ref, from_path, self.ctx.git, self.ctx.open_prs)
        ):
            return Resolution("merge-order", found.path, at, pr[1], pr=pr[0])
        return Resolution(
            found.kind, found.path if found.kind != "ambiguous" else file.path, at, found
        )

    def linked(self, ref: Reference, name: str, file: FileRef) -> Resolution:
        label = f"{name}:{file.path}"
        repo = self._linked.get(name) or self._linked.setdefault(name, self.open(name))
        at = f" on {name}'s {repo.branch}"
        if repo.git is None or repo.develop is None:
            # Only the reason: nothing else about a repository that was not read.
            reason = repo.reason or UNKNOWN_DEVELOP
            return Resolution("unverifiable", label, at, repo=name, reason=reason)
        try:
            found = target(self.files(repo.git, repo.develop), ref, None)
        except Exception as exc:  # another repository is read through an adapter: say why
            reason = f"not checked: {exc}"
            return Resolution("unverifiable", label, at, repo=name, reason=reason)
        if found.kind in ("missing", "no-file") and (
            pr := self.holding_pr(ref, None, repo.git, repo.open_prs)
        ):
            return Resolution("merge-order", f"{name}:{pr[1].path}", at, pr[1], repo=name, pr=pr[0])
        shown = f"{name}:{found.path}" if found.kind not in ("ambiguous", "no-file") else label
        return Resolution(found.kind, shown, at, found, repo=name)

    def linked_files(self, name: str, ref: str | None) -> LinkedTree | str:
        """Another repository's tree at `ref` (a blob URL's branch, tag or commit) when it can be
        read there, else at its develop; or why it cannot be read."""
        repo = self._linked.get(name) or self._linked.setdefault(name, self.open(name))
        if repo.git is None or repo.develop is None:
            return repo.reason or UNKNOWN_DEVELOP
        try:
            sha = (repo.git.resolve(ref) if ref else None) or repo.develop
            where = f" on {name}'s {ref if sha != repo.develop else repo.branch}"
            return LinkedTree(self.files(repo.git, sha), where, repo.git, repo.open_prs)
        except Exception as exc:  # another repository is read through an adapter: say why
            return f"not checked: {exc}"

    def open(self, name: str) -> LinkedRepo:
        if self._links is None:
            self._links = bounded(self.ctx.links, self.ctx.config.links)
        return self._links(name)

    def holding_pr(
        self, ref: Reference, from_path: str | None, git: GitView, prs: tuple[OpenPR, ...]
    ) -> tuple[OpenPR, Target] | None:
        """The first open PR whose head holds the heading exactly once in the named file."""
        for pr in prs:
            try:
                found = target(self.files(git, pr.head), ref, from_path)
            except Exception:  # a PR head that cannot be read holds nothing we can name
                continue
            if found.kind == "resolved":
                return pr, found
        return None

    def files(self, git: GitView, commit: str) -> TreeFiles:
        key = (id(git), commit)
        if key not in self._trees:
            self._trees[key] = TreeFiles(git.tree(commit))
        return self._trees[key]
