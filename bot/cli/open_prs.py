"""Open PRs of a local repository, for the command line (the App asks GitHub instead).

Discovery, in order of trust:

1. `--open-pr NUMBER=REF`, as given: it replaces discovery, and only the PR under review is left
   out of it.
2. `refs/pull/N/head`, which a GitHub mirror holds for every PR ever opened, merged and closed ones
   included. PR N is decided by the first of these that applies:
   a. its head is contained in develop: merged (conclusive: by a merge commit or a fast-forward,
      or nothing of it is left to merge);
   b. a subject on develop's first-parent history ends in `(#N)` (GitHub's squash and rebase
      merges) or starts `Merge pull request #N`: merged (conclusive; a squashed head is never an
      ancestor of develop, so a alone would keep every squash-merged PR open forever);
   c. `refs/pull/N/merge` exists and is fresh (GitHub made it within the max age): open, into
      the branch its first parent is on: a merge ref whose first parent is not on develop's
      first-parent line is a PR to another branch (a backport), which is left out. It comes after a
      and b, which cannot be wrong, and a stale merge ref says nothing, because a mirror fetched
      without pruning keeps the merge refs of PRs merged years ago;
   d. otherwise open only if its head was committed within the max age (`--open-pr-max-age`,
      default 60 days). This is the one heuristic: an open PR with conflicts has no merge ref
      either, so its absence is not "closed"; a PR closed unmerged leaves no other trace, and
      grows old.
   Ages are measured from the repository's newest commit among those read (develop's tip, the
   merge refs, the heads), not from the clock: a mirror snapshot reads the same next month.
   The history read for b is bounded (`MERGED_SUBJECTS` commits): a PR merged before that has a
   head older than any sensible max age, which d then drops (unless a mirror never pruned has
   kept its merge ref for that long).
3. Without any `refs/pull/*/head`: remote-tracking branches, and local branches that track one
   (a maintainer's local experiment, pushed nowhere, is no PR), a local branch standing for the
   remote one it tracks. A branch is a candidate only if it is no mainline branch (`NEVER_PRS`, nor
   a name of the integration branch's tip), is not contained in develop, was committed within the
   max age, and its diff from its merge base with develop touches a chart (a directory holding a
   Chart.yaml at develop or at the branch's head).

`--no-open-prs` turns 2 and 3 off (1 still applies). Each PR found gets a body, for the duplicates
check's closing keywords: the file `--pr-body-of N=FILE` names, else its branch's commit messages
(the commits its head has that develop has not), all read in one `rev-list` and one batch read. The
PR under review, by its head and by its number when known, is never listed. git runs a few times
whatever the number of PRs: one `for-each-ref` and, meanwhile, one bounded first-parent log; the
dates of the heads that rule b leaves, read by the long-lived `cat-file`; one `rev-list` for rule a,
asked only of the PRs that rules b to d leave open (it gives the claims' fork points too,
remembered); for branches, one `for-each-ref --merged` and a diff per branch that passed the
cheaper rules."""

from __future__ import annotations

import argparse
import contextvars
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from bot.charts.resources import Pool
from bot.errors import UsageError
from bot.git.repo import GitRepo
from bot.model.chart_files import find_charts, in_chart
from bot.model.context import OpenPR
from bot.versions.claims import pr_number

OPEN_PR_ARG_RE = re.compile(r"^(\d+)=(.+)$")
BODY_OF_ARG_RE = re.compile(r"^(\d+)=(.+)$")
# A branch's commits whose messages stand for its body: more is a long-lived branch, not a PR.
BODY_COMMITS = 250
PULL_REF_RE = re.compile(r"^refs/pull/(\d+)/(head|merge)$")
# A head named for its PR (`refs/pull/N/head`, `pull/N/head`): the number of the PR under review.
HEAD_NUMBER_RE = re.compile(r"^(?:refs/)?pull/(\d+)/head$")
# Long-lived branches that are never a PR's head.
NEVER_PRS = frozenset({"develop", "main", "master", "HEAD", "gh-pages"})
DEFAULT_MAX_AGE_DAYS = 60
# How many of develop's first-parent subjects are searched for `(#N)`.
MERGED_SUBJECTS = 5000
_PULLS, _BRANCHES = ("refs/pull",), ("refs/heads", "refs/remotes")
_DAY = 86400


@dataclass(frozen=True)
class Discovery:
    """Whether open PRs are discovered (`--no-open-prs`), and how old a head may be."""

    enabled: bool = True
    max_age_days: int = DEFAULT_MAX_AGE_DAYS
    now: float | None = None  # seconds since the epoch; None: the clock
    # PR number -> its body (`--pr-body-of`); None: bodies are not read at all (a caller that
    # needs none), else a PR without one gets its commits' messages.
    bodies: Mapping[int, str] | None = field(default=None)

    def recent(self, date: int, newest: int = 0) -> bool:
        """Whether `date` is within the max age of `newest`, the repository's newest commit date
        read (the clock where none was), unless `now` is given."""
        now = self.now if self.now is not None else newest or time.time()
        return date >= now - self.max_age_days * _DAY


DEFAULT_DISCOVERY = Discovery()


def add_discovery_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-open-prs",
        dest="discover_open_prs",
        action="store_false",
        help="discover no open PRs from refs/pull/*/head or branches (--open-pr still counts)",
    )
    parser.add_argument(
        "--open-pr-max-age",
        type=_days,
        default=DEFAULT_MAX_AGE_DAYS,
        metavar="DAYS",
        help="a discovered PR without a merge ref, or a branch, counts as open only if its head "
        f"was committed within DAYS (default: {DEFAULT_MAX_AGE_DAYS})",
    )
    parser.add_argument(
        "--pr-body-of",
        action="append",
        default=[],
        metavar="NUMBER=FILE",
        help="the description of open PR NUMBER, from FILE (repeatable); without it, a PR's body "
        "is its branch's commit messages",
    )


def discovery_from(args: argparse.Namespace) -> Discovery:
    return Discovery(
        enabled=args.discover_open_prs,
        max_age_days=args.open_pr_max_age,
        bodies=parse_bodies(args.pr_body_of),
    )


def parse_bodies(args: Sequence[str]) -> dict[int, str]:
    """`--pr-body-of NUMBER=FILE` arguments: number -> the file's text. Raises UsageError naming
    a malformed argument or a file that cannot be read."""
    bodies = {}
    for arg in args:
        match = BODY_OF_ARG_RE.match(arg.strip())
        if match is None:
            raise UsageError(f"--pr-body-of {arg!r}: expected NUMBER=FILE, e.g. 12=pr-12.md")
        try:
            bodies[int(match.group(1))] = Path(match.group(2)).read_text(errors="replace")
        except OSError as exc:
            raise UsageError(f"--pr-body-of {arg!r}: {exc.strerror}") from None
    return bodies


def _days(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number of days, got {text!r}")
    return int(text)


def head_number(ref: str) -> int | None:
    """N when the head under review is named `refs/pull/N/head` (or `pull/N/head`)."""
    match = HEAD_NUMBER_RE.match(ref)
    return int(match.group(1)) if match else None


def finding_open_prs(
    repo: GitRepo,
    develop_sha: str,
    exclude_head: str | None,
    pool: Pool,
    *,
    rules: Discovery = DEFAULT_DISCOVERY,
    exclude_number: int | None = None,
) -> Future[tuple[OpenPR, ...]]:
    """`discover_open_prs` by the rules (no `--open-pr`), under way in `pool` (the resources'
    `open_prs`) beside the review's renders: the review waits for it where it first needs the
    open PRs."""
    return pool.submit(
        discover_open_prs,
        repo,
        develop_sha,
        None,
        exclude_head,
        rules=rules,
        exclude_number=exclude_number,
    )


def discover_open_prs(
    repo: GitRepo,
    develop_sha: str,
    explicit: list[str] | None,
    exclude_head: str | None,
    *,
    rules: Discovery = DEFAULT_DISCOVERY,
    exclude_number: int | None = None,
) -> tuple[OpenPR, ...]:
    """The other open PRs' heads. Raises UsageError naming a malformed or unknown `--open-pr`."""
    if explicit:
        found = [parse_open_pr(repo, arg) for arg in explicit]
    elif rules.enabled:
        with ThreadPoolExecutor(1) as pool:
            # Rule 2b's subjects are read while the refs are listed (a mirror's thousands of refs
            # take git as long); without refs/pull they go unused.
            # In this context: the listings it reads are the review's memos' (bot/memos.py).
            here = contextvars.copy_context()
            line = pool.submit(here.run, repo.first_parent_line, develop_sha, MERGED_SUBJECTS)
            tips = repo.refs(*_PULLS, *_BRANCHES)
            heads, merges = _pull_refs(tips)
            # Where refs/pull/*/head exist they alone say which PRs there are, even when every
            # one has merged or closed: the branches are those PRs' heads again (or no PR's), and
            # falling back to them would reopen what rule 2 closed.
            found = _unique_heads(
                _open_pulls(repo, develop_sha, heads, merges, rules, line)
                if heads
                else _open_branches(repo, develop_sha, tips, rules)
            )
    else:
        found = []
    kept = [
        pr
        for pr in found
        if pr.head != exclude_head and not (exclude_number and pr.number == exclude_number)
    ]
    return tuple(
        kept if rules.bodies is None else with_bodies(repo, develop_sha, kept, rules.bodies)
    )


def with_bodies(
    repo: GitRepo, develop_sha: str, prs: Sequence[OpenPR], given: Mapping[int, str]
) -> list[OpenPR]:
    """Each PR with its body: the one given for its number, else its branch's commit messages."""
    need = [pr.head for pr in prs if not (pr.number and pr.number in given)]
    messages = branch_messages(repo, develop_sha, need) if need else {}
    return [
        replace(pr, body=given[pr.number] if pr.number in given else messages.get(pr.head, ""))
        for pr in prs
    ]


def branch_messages(repo: GitRepo, develop_sha: str, heads: Sequence[str]) -> dict[str, str]:
    """Each head's commit messages, newest first: the commits it has that develop has not, found
    in one `rev-list` for every head, their objects read in one batch."""
    graph = repo.commits_outside(list(heads), develop_sha) or {}
    own = {head: _reachable(graph, head) for head in heads}
    wanted = list(dict.fromkeys(sha for shas in own.values() for sha in shas))
    # `blobs` reads any object through `cat-file --batch`: here commit objects, whose message
    # follows the first blank line.
    texts = dict(zip(wanted, repo.blobs(wanted), strict=True))
    return {head: "\n\n".join(_message(texts[sha]) for sha in shas) for head, shas in own.items()}


def _reachable(graph: Mapping[str, tuple[str, ...]], head: str) -> list[str]:
    """The commits of `graph` reachable from `head`, in walk order, at most BODY_COMMITS."""
    seen: list[str] = []
    todo = [head]
    while todo and len(seen) < BODY_COMMITS:
        sha = todo.pop(0)
        if sha in graph and sha not in seen:
            seen.append(sha)
            todo += graph[sha]
    return seen


def _message(raw: bytes) -> str:
    _, _, message = raw.partition(b"\n\n")
    return message.decode("utf-8", errors="replace").strip()


def parse_open_pr(repo: GitRepo, arg: str) -> OpenPR:
    match = OPEN_PR_ARG_RE.match(arg.strip())
    if match is None:
        raise UsageError(f"--open-pr {arg!r}: expected NUMBER=REF, e.g. 12=feature-x")
    ref = match.group(2)
    sha = repo.resolve(ref)
    if sha is None:
        raise UsageError(f"--open-pr {arg!r}: unknown ref {ref!r}")
    return OpenPR(number=int(match.group(1)), head=sha, ref=ref)


def open_pull_requests(
    repo: GitRepo, develop_sha: str, rules: Discovery = DEFAULT_DISCOVERY
) -> tuple[OpenPR, ...]:
    """The open PRs among `refs/pull/*/head` (rule 2 of the module), by number; no branches."""
    if not rules.enabled:
        return ()
    heads, merges = _pull_refs(repo.refs(*_PULLS))
    return tuple(_open_pulls(repo, develop_sha, heads, merges, rules))


def _pull_refs(tips: Mapping[str, str]) -> tuple[dict[int, str], dict[int, str]]:
    """The PRs' heads by number, and their merge refs' commits by number."""
    heads: dict[int, str] = {}
    merges: dict[int, str] = {}
    for name, sha in tips.items():
        match = PULL_REF_RE.match(name)
        if match is not None and match.group(2) == "head":
            heads[int(match.group(1))] = sha
        elif match is not None:
            merges[int(match.group(1))] = sha
    return heads, merges


def _open_pulls(
    repo: GitRepo,
    develop_sha: str,
    heads: Mapping[int, str],
    merges: Mapping[int, str],
    rules: Discovery,
    line: Future[tuple[tuple[str, str], ...]] | None = None,
) -> list[OpenPR]:
    """Rule 2 of the module, a to d, for every PR at once. A PR is open when no rule closes it,
    so each costly rule is asked only of the PRs the cheaper ones leave open: of a mirror's
    thousands of heads, mostly squash-merged (b), the merge refs' commits and the heads' dates are
    read for those left (c, d), and history is walked (a) for about as many as are open. Rule a's
    answer is the claims' fork points (one `rev-list`, remembered), so that walk is not done
    twice."""
    if not heads:
        return []
    said = (
        line.result() if line is not None else repo.first_parent_line(develop_sha, MERGED_SUBJECTS)
    )
    squashed = _merged_numbers(subject for _, subject in said)
    unmerged = {n: sha for n, sha in sorted(heads.items()) if n not in squashed}
    merge_commits = repo.first_parents([merges[n] for n in unmerged if n in merges])
    dates = repo.commit_dates([develop_sha, *(sha for n, sha in unmerged.items())])
    newest = max([*dates.values(), *(d for _, d in merge_commits.values())], default=0)
    on_line = {sha for sha, _ in said}
    left = {}
    for number, sha in unmerged.items():
        merge = merge_commits.get(merges.get(number, ""))
        fresh = merge is not None and rules.recent(merge[1], newest)
        if fresh and merge is not None and merge[0] not in on_line:
            continue  # c: a PR into another branch
        if fresh or rules.recent(dates.get(sha, 0), newest):
            left[number] = sha
    points = repo.fork_points(develop_sha, list(left.values()))
    return [
        OpenPR(number=number, head=sha)
        for number, sha in left.items()
        if not (sha in points and points[sha].contained)
    ]


def _merged_numbers(subjects: Iterable[str]) -> set[int]:
    return {n for n in map(pr_number, subjects) if n is not None}


def _open_branches(
    repo: GitRepo, develop_sha: str, tips: Mapping[str, str], rules: Discovery
) -> list[OpenPR]:
    branches = _branches(tips, repo.upstreams())
    # The integration branch under whatever name it has (a configured `develop:`, or `origin/x`
    # ahead of a local `x`): every name of develop's tip.
    mainline = NEVER_PRS | {
        _short(name, 2 if _local(name) else 3)
        for name, sha in tips.items()
        if sha == develop_sha and name.startswith(_BRANCHES)
    }
    contained = repo.refs(*_BRANCHES, merged_into=develop_sha)
    dates = repo.commit_dates([develop_sha, *(sha for _, _, sha in branches)])
    newest = max(dates.values(), default=0)
    candidates = [
        (ref, sha)
        for ref, name, sha in branches
        if ref not in mainline and name not in contained and rules.recent(dates.get(sha, 0), newest)
    ]
    if not candidates:
        return []
    develop_charts = find_charts(repo.tree(develop_sha))
    return [
        OpenPR(0, sha, ref)
        for ref, sha in candidates
        if _touches_chart(repo, develop_sha, sha, develop_charts)
    ]


def _branches(tips: Mapping[str, str], upstreams: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(branch, ref name, tip): local branches that track a remote branch other than a mainline
    one (the local tip stands for it), then remote-tracking ones that no such local branch
    shadows. A local branch tracking nothing, or tracking develop itself, is the maintainer's own
    work, which no PR shows yet."""
    found = []
    for name, tip in sorted(tips.items()):
        upstream = upstreams.get(name, "")
        tracked = upstream.startswith("refs/remotes/") and _short(upstream, 3) not in NEVER_PRS
        if _local(name) and tracked:
            found.append((_short(name, 2), name, tip))
    names = {ref for ref, _, _ in found}
    for name, tip in sorted(tips.items()):
        if name.startswith("refs/remotes/"):
            branch = _short(name, 3)  # refs/remotes/<remote>/<branch>
            if branch not in names:
                found.append((branch, name, tip))
                names.add(branch)
    return found


def _local(name: str) -> bool:
    return name.startswith("refs/heads/")


def _touches_chart(
    repo: GitRepo, develop_sha: str, head: str, develop_charts: Iterable[str]
) -> bool:
    """Whether the branch's diff from its merge base with develop changes a chart's files."""
    changes = repo.changes_from_merge_base(develop_sha, head)
    if changes is None:  # several merge bases, or none (an unrelated history)
        base = repo.merge_base(develop_sha, head)
        if base is None:
            return False
        changes = repo.changes(base, head)
    charts = {*develop_charts, *find_charts(repo.tree(head))}
    paths = {p for c in changes for p in (c.path, c.old_path) if p}
    return any(in_chart(path, chart) for path in paths for chart in charts)


def _short(refname: str, drop: int) -> str:
    return refname.split("/", drop)[-1]


def _unique_heads(prs: Iterable[OpenPR]) -> list[OpenPR]:
    seen: set[str] = set()
    unique = []
    for pr in prs:
        if pr.head not in seen:
            seen.add(pr.head)
            unique.append(pr)
    return unique
