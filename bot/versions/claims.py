"""Chart-version claims and their verdicts: the one place that decides whether a PR head's chart
version is ok, missing, taken by develop or raced by another open PR. The `version` check and the
release board both ask `verdict`, so a PR's comment and its board row never disagree."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol, runtime_checkable

import semver

from bot.git.fork_points import ForkPoint
from bot.git.objects import OBJECT_ID_RE, Commit, GitView, Tree
from bot.lru import BoundedCache
from bot.model.chart_files import (
    CHART_FILE,
    HELMIGNORE,
    ChartMeta,
    changed_paths,
    chart_file,
    content_paths,
    in_chart,
    read_chart_meta,
)
from bot.model.context import OpenPR
from bot.versions.semver import (
    bump_level,
    coerce_version,
    is_greater,
    next_free_version,
    parse_version,
    same_version,
    styled,
)

# A squash merge's subject ends "(#123)"; a merge commit's starts "Merge pull request #123".
PR_SUBJECT_RE = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)\b")
# How far back to look for the develop commit that set a version.
HISTORY_LIMIT = 200

MergeCase = Literal["conflict", "clean"]
# `Chart.yaml` blobs whose parse is remembered (a ChartMeta is a few strings).
_METAS_KEPT = 4096


class Status(StrEnum):
    """A claim's verdict; the value is the finding's `rule` where there is one."""

    OK = "ok"
    NO_BUMP_NEEDED = "no-bump-needed"
    UNTOUCHED = "untouched"
    REMOVED = "removed"
    MISSING_BUMP = "missing-bump"
    INVALID = "invalid-version"
    NOT_GREATER = "not-greater"
    TAKEN = "taken-by-develop"
    RACE = "race"


@dataclass(frozen=True)
class Claim:
    """What one head does to one chart, measured from its merge base with the integration branch."""

    chart: str
    head_sha: str
    base: ChartMeta | None  # None: the chart is new at head
    head: ChartMeta | None  # None: the head removes the chart
    changed: tuple[str, ...] = ()  # every changed file under the chart
    content: tuple[str, ...] = ()  # those that are released content

    @property
    def version_unchanged(self) -> bool:
        if self.base is None or self.head is None:
            return False
        return (self.base.version or "").strip() == (self.head.version or "").strip()


@dataclass(frozen=True)
class Rival:
    pr: OpenPR
    claim: Claim
    version: semver.Version


@dataclass(frozen=True)
class Verdict:
    status: Status
    develop_version: str | None = None
    suggested: str | None = None
    rivals: tuple[OpenPR, ...] = ()


def claim_between(
    chart_path: str,
    base: Tree | None,
    head: Tree,
    changed: Iterable[str],
    ignore: Sequence[str] = (),
) -> Claim:
    """The claim of `head` against `base`, given the files that changed between them."""
    base_meta = read_chart_meta(base, chart_path) if base is not None else None
    return _claim(chart_path, head, changed, ignore, base_meta, read_chart_meta(head, chart_path))


def _claim(
    chart_path: str,
    head: Tree,
    changed: Iterable[str],
    ignore: Sequence[str],
    base_meta: ChartMeta | None,
    head_meta: ChartMeta | None,
) -> Claim:
    changed = tuple(dict.fromkeys(p for p in changed if in_chart(p, chart_path)))
    content: tuple[str, ...] = ()
    if changed:  # most open PRs leave a given chart alone: nothing to classify, nothing to read
        helmignore = head.text(_join(chart_path, HELMIGNORE))
        content = content_paths(changed, chart_path, ignore, helmignore)
    return Claim(
        chart=chart_path,
        head_sha=head.commit,
        base=base_meta,
        head=head_meta,
        changed=changed,
        content=content,
    )


def _remembered_meta(tree: ChartDir, chart_path: str) -> ChartMeta | None:
    """`read_chart_meta`, remembered by the blob's id: hundreds of open PRs' heads and merge bases
    share a handful of `Chart.yaml` blobs."""
    oid = tree.content_id(chart_file(chart_path))
    if oid is None:
        return None
    meta = _METAS.get((chart_path, oid))
    if meta is None:
        meta = read_chart_meta(tree, chart_path)
        if meta is not None:  # the blob is there: it always parses to a meta, maybe an error
            _METAS.put((chart_path, oid), meta)
    return meta


def chart_claim(
    git: GitView, chart_path: str, head_sha: str, develop_sha: str, ignore: Sequence[str] = ()
) -> Claim:
    """The claim of an open PR's head, measured from its own merge base with develop."""
    merge_base = git.merge_base(develop_sha, head_sha)
    base = git.tree(merge_base) if merge_base else None
    head = git.tree(head_sha)
    prefix = chart_path if chart_path not in ("", ".") else ""
    changed = changed_paths(base, head, chart_path) if base is not None else head.paths(prefix)
    return claim_between(chart_path, base, head, changed, ignore)


def claimed_version(claim: Claim) -> semver.Version | None:
    """The version the head takes for itself: valid, and a bump (or a new chart); else None."""
    if claim.head is None or claim.version_unchanged:
        return None
    head = parse_version(claim.head.version)
    if head is None or claim.base is None:
        return head
    base = parse_version(claim.base.version)
    return head if base is None or is_greater(head, base) else None


def open_claims(
    git: GitView,
    chart_path: str,
    open_prs: Iterable[OpenPR],
    develop_sha: str,
    ignore: Sequence[str] = (),
    exclude_head: str | None = None,
) -> tuple[tuple[OpenPR, Claim], ...]:
    """Each open PR's claim on the chart. Heads already in develop are merged, not open: develop's
    own version speaks for them."""
    prs = [pr for pr in open_prs if pr.head != exclude_head]
    if isinstance(git, BatchGit):
        return _batched_claims(git, chart_path, prs, develop_sha, ignore)
    return tuple(
        (pr, chart_claim(git, chart_path, pr.head, develop_sha, ignore))
        for pr in prs
        if not git.is_ancestor(pr.head, develop_sha)
    )


class ChartDir(Tree, Protocol):
    """A chart directory at one commit that tells files apart by id without reading them."""

    @property
    def tree_id(self) -> str | None: ...

    def content_id(self, path: str) -> str | None:
        """The id of what `read(path)` returns, None where it returns None."""
        ...

    def changed_since(self, base_tree: str | None) -> tuple[str, ...]:
        """`changed_paths` from the directory whose tree is `base_tree` to this one."""
        ...


@runtime_checkable
class BatchGit(GitView, Protocol):
    """A `GitView` that answers for many PRs at once (the repository adapter does): what makes the
    claims of hundreds of open PRs cost a few git requests, not several processes per PR. The
    claims are those `chart_claim` makes, one by one, of any other view."""

    def fork_points(self, develop: str, heads: Sequence[str]) -> Mapping[str, ForkPoint]: ...

    def subtrees(
        self, directory: str, commits: Sequence[str], read: Sequence[str] = ()
    ) -> Mapping[str, ChartDir]:
        """`directory` at each commit; the files named in `read` (relative to it) read at once."""
        ...

    def blobs(self, oids: list[str]) -> list[bytes]:
        """Blobs by id, in one request (remembered: `read` of them then asks nothing)."""
        ...


_METAS: BoundedCache[tuple[str, str], ChartMeta] = BoundedCache(_METAS_KEPT)
# (develop, chart, version) -> its origin, None included (hence the 1-tuple).
_ORIGINS: BoundedCache[tuple[str, str, str], tuple[Origin | None]] = BoundedCache(_METAS_KEPT)


def _batched_claims(
    git: BatchGit, chart_path: str, prs: Sequence[OpenPR], develop_sha: str, ignore: Sequence[str]
) -> tuple[tuple[OpenPR, Claim], ...]:
    points = git.fork_points(develop_sha, [pr.head for pr in prs])
    forked = [(pr, points[pr.head].merge_base) for pr in prs if not points[pr.head].contained]
    commits = [c for pr, base in forked for c in (pr.head, base) if c]
    dirs = git.subtrees(chart_path, commits, read=(CHART_FILE, HELMIGNORE))
    claims = []
    for pr, merge_base in forked:
        base, head = (dirs[merge_base] if merge_base else None), dirs[pr.head]
        changed = head.changed_since(base.tree_id) if base is not None else head.paths(chart_path)
        base_meta = _remembered_meta(base, chart_path) if base is not None else None
        head_meta = _remembered_meta(head, chart_path)
        claims.append((pr, _claim(chart_path, head, changed, ignore, base_meta, head_meta)))
    return tuple(claims)


def rivals_of(claims: Iterable[tuple[OpenPR, Claim]]) -> tuple[Rival, ...]:
    """The claims that take a version for themselves (rule 3 counts only real bumps)."""
    rivals = []
    for pr, claim in claims:
        version = claimed_version(claim)
        if version is not None:
            rivals.append(Rival(pr, claim, version))
    return tuple(rivals)


def verdict(claim: Claim, develop: ChartMeta | None, rivals: Sequence[Rival]) -> Verdict:
    """Rules 1-4 of the version check for one claim, against develop's tip and the other open PRs'
    claims (`rivals`, which must not hold the claim's own PR)."""
    develop_text = develop.version if develop is not None else None
    develop_v = parse_version(develop_text)
    base_v = parse_version(claim.base.version) if claim.base is not None else None
    head_v = parse_version(claim.head.version) if claim.head is not None else None
    meant = coerce_version(claim.head.version) if claim.head is not None else None
    free = next_free_version(
        bump_level(base_v, meant), [develop_v, base_v, *(r.version for r in rivals)], meant
    )
    written = (
        claim.head.version if claim.head is not None else None,
        claim.base.version if claim.base is not None else None,
        develop_text,
    )

    def judged(status: Status, rivals: Sequence[OpenPR] = ()) -> Verdict:
        suggested = None if status in _SETTLED else styled(free, written)
        return Verdict(status, develop_text, suggested, tuple(rivals))

    if claim.head is None:
        # Removed only if it was there: a head that branched before develop added the chart
        # neither has it nor touches it.
        return judged(Status.REMOVED if claim.base is not None else Status.UNTOUCHED)
    if not claim.changed and (claim.base is not None):
        return judged(Status.UNTOUCHED)
    if claim.version_unchanged:
        return judged(Status.MISSING_BUMP if claim.content else Status.NO_BUMP_NEEDED)
    if head_v is None:
        return judged(Status.INVALID)
    if base_v is not None and not is_greater(head_v, base_v):
        return judged(Status.NOT_GREATER)
    if develop_v is not None and not is_greater(head_v, develop_v):
        return judged(Status.TAKEN)
    racing = [r.pr for r in rivals if same_version(r.version, head_v)]
    return judged(Status.RACE, racing) if racing else judged(Status.OK)


_SETTLED = {Status.OK, Status.NO_BUMP_NEEDED, Status.UNTOUCHED, Status.REMOVED}


# -- git facts the messages name ------------------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    """The develop commit that set a chart version, and the PR that landed it when known."""

    commit: Commit
    pr: int | None


def merge_case(git: GitView, develop_sha: str, head_sha: str, chart_path: str) -> MergeCase:
    """Whether merging the head into develop conflicts on `Chart.yaml` (`git merge-tree`)."""
    conflicts = git.merge_conflicts(develop_sha, head_sha)
    return "conflict" if chart_file(chart_path) in conflicts else "clean"


def released_tag(git: GitView, chart_name: str | None, version: str) -> str | None:
    """The tag that released `version`: `vX.Y.Z`, `X.Y.Z`, or chart-releaser's `NAME-X.Y.Z`."""
    wanted = [f"v{version}", version] + ([f"{chart_name}-{version}"] if chart_name else [])
    present = set(git.tagged(wanted))
    return next((t for t in wanted if t in present), None)


def pr_label(pr: OpenPR) -> str:
    """How messages name an open PR; a branch found without a PR number is named by its branch."""
    if pr.number:
        return f"#{pr.number}"
    return f"branch {pr.ref}" if pr.ref else f"commit {pr.head[:7]}"


def pr_number(subject: str) -> int | None:
    match = PR_SUBJECT_RE.search(subject)
    return int(match.group(1) or match.group(2)) if match else None


def version_origin(git: GitView, develop_sha: str, chart_path: str, version: str) -> Origin | None:
    """The oldest commit of the newest run on develop whose `Chart.yaml` carries `version`.

    A commit id names its whole history, so the answer is remembered by develop's id: the version
    check asks again when it proves its suggestion, and the App at each review until develop moves.
    """
    if not OBJECT_ID_RE.fullmatch(develop_sha):  # a ref's name: its history may move
        return _version_origin(git, develop_sha, chart_path, version)
    key = (develop_sha, chart_path, version)
    known = _ORIGINS.get(key)
    if known is None:
        known = (_version_origin(git, develop_sha, chart_path, version),)
        _ORIGINS.put(key, known)
    return known[0]


def _version_origin(git: GitView, develop_sha: str, chart_path: str, version: str) -> Origin | None:
    wanted = parse_version(version)
    if wanted is None:
        return None
    setter = None
    # Read as git writes it: the run is usually a commit or two of a long path history.
    for commit in git.commits(develop_sha, path=chart_file(chart_path), max_count=HISTORY_LIMIT):
        meta = read_chart_meta(git.tree(commit.sha), chart_path)
        found = parse_version(meta.version) if meta is not None else None
        if found is None or not same_version(found, wanted):
            break
        setter = commit
    if setter is None:
        return None
    number = pr_number(setter.subject)
    if number is None:
        number = _landing_pr(git, setter.sha, develop_sha)
    return Origin(setter, number)


def _landing_pr(git: GitView, sha: str, develop_sha: str) -> int | None:
    """The PR whose merge commit brought `sha` into develop, the earliest that contains it."""
    later = git.log(f"{sha}..{develop_sha}", max_count=HISTORY_LIMIT)
    for commit in reversed(later):
        number = pr_number(commit.subject)
        if number is not None and git.is_ancestor(sha, commit.sha):
            return number
    return None


def _join(chart_path: str, name: str) -> str:
    return f"{chart_path.rstrip('/')}/{name}" if chart_path not in ("", ".") else name
