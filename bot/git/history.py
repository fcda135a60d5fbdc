"""The changes merged into a branch, each as the pull request it was: what `chart-review replay`
reviews. Pure: it reads a first-parent log and the repository's pull refs through a small protocol.

How a first-parent commit maps to the change that was reviewed before it merged:

- a merge commit (two parents or more): its second parent against its first, i.e. the branch that
  was merged against the integration branch it merged into;
- a squash or rebase merge (the subject ends in `(#N)`) or a plain commit: the commit against its
  first parent, since that is all the history keeps of it;
- a run of plain commits on the line with one committer date: one change, the newest against the
  oldest's parent. GitHub's "Rebase and merge" and merge bots (Prow's tide) commit every commit
  of a PR at one moment, so that is the PR; judged commit by commit, each but its last would lack
  what the PR did later (the bump in its final commit);
- whichever of those it is, when the repository holds `refs/pull/N/head` for the PR the subject
  names, that head against the commit's first parent: the PR's own commits, as its reviewers saw
  them (the engine measures a head from its merge base with the base)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

# GitHub's merge subjects: `Title (#12)` for squash and rebase merges, `Merge pull request #12
# from owner/branch` for merge commits.
PR_SUBJECT_RE = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+)\b")
PULL_HEAD = "refs/pull/{}/head"

# One record of `first_parent_log`'s format: `\x1e` then `sha parents...\0date\0subject\0`, then
# the paths the commit changed against its first parent, each ended by `\0`.
LOG_FORMAT = "--format=%x1e%H %P%x00%ct%x00%s%x00"


def pr_number(subject: str) -> int | None:
    """The PR a merge subject names, or None."""
    match = PR_SUBJECT_RE.search(subject)
    return int(match.group(1) or match.group(2)) if match else None


@dataclass(frozen=True)
class LogEntry:
    sha: str
    parents: tuple[str, ...]
    date: int  # committer date, seconds since the epoch
    subject: str
    paths: tuple[str, ...]  # changed against the first parent


def parse_first_parent_log(data: bytes) -> list[LogEntry]:
    """`git log --first-parent --diff-merges=first-parent --name-only -z LOG_FORMAT` → entries."""
    entries = []
    for record in data.split(b"\x1e")[1:]:
        fields = record.split(b"\x00")
        ids = fields[0].decode().split()
        paths = tuple(p.decode(errors="surrogateescape") for p in fields[3:] if p.strip(b"\n"))
        entries.append(
            LogEntry(
                sha=ids[0],
                parents=tuple(ids[1:]),
                date=int(fields[1] or 0),
                subject=fields[2].decode(errors="replace"),
                paths=tuple(p.lstrip("\n") for p in paths),
            )
        )
    return entries


@dataclass(frozen=True)
class MergedChange:
    """One change as it was reviewed: `head` against `base` (the branch it merged into)."""

    commit: str  # the commit on the branch that brought it in
    subject: str
    date: int
    number: int | None  # the PR, when the subject or a pull ref names it
    kind: str  # "merge" | "squash" | "commit", and "+pull-ref" when its head came from refs/pull
    base: str
    head: str
    paths: tuple[str, ...]  # what it changed on the branch


def merged_change(entry: LogEntry, pull_heads: Mapping[str, str]) -> MergedChange | None:
    """The change `entry` merged, or None for a root commit (nothing to compare it with)."""
    if not entry.parents:
        return None
    number = pr_number(entry.subject)
    if len(entry.parents) > 1:
        kind, head = "merge", entry.parents[1]
    else:
        kind, head = ("squash" if number is not None else "commit"), entry.sha
    pulled = pull_heads.get(PULL_HEAD.format(number)) if number is not None else None
    if pulled is not None and pulled != entry.parents[0]:
        kind, head = f"{kind}+pull-ref", pulled
    return MergedChange(
        commit=entry.sha,
        subject=entry.subject,
        date=entry.date,
        number=number,
        kind=kind,
        base=entry.parents[0],
        head=head,
        paths=entry.paths,
    )


def merged_changes(
    entries: Iterable[LogEntry],
    pull_heads: Mapping[str, str],
    touches: Callable[[Sequence[str]], bool],
    last: int | None = None,
) -> Iterator[MergedChange]:
    """The changes of a first-parent log (newest first) that `touches` accepts by the paths they
    changed, at most `last` of them; `pull_heads` maps `refs/pull/N/head` to its commit."""
    found = 0
    for run in _runs(entries):
        if last is not None and found >= last:
            return
        change = merged_change(run[0], pull_heads)
        if change is not None and len(run) > 1:
            change = _rebased(change, run)
        if change is None or not touches(change.paths):
            continue
        found += 1
        yield change


def _plain(entry: LogEntry) -> bool:
    return len(entry.parents) == 1 and pr_number(entry.subject) is None


def _runs(entries: Iterable[LogEntry]) -> Iterator[list[LogEntry]]:
    """The entries (newest first) in runs: plain commits in a row with one committer date are one
    run, every other entry a run of its own."""
    run: list[LogEntry] = []
    for entry in entries:
        if run and _plain(entry) and _plain(run[-1]) and entry.date == run[-1].date:
            run.append(entry)
            continue
        if run:
            yield run
        run = [entry]
    if run:
        yield run


def _rebased(newest: MergedChange, run: Sequence[LogEntry]) -> MergedChange:
    """The run's commits as the one change they were: the newest against the oldest's parent."""
    paths = tuple(dict.fromkeys(p for entry in run for p in entry.paths))
    subject = f"{newest.subject} (and {len(run) - 1} more commits of one merge)"
    return MergedChange(
        commit=newest.commit,
        subject=subject,
        date=newest.date,
        number=None,
        kind="rebase",
        base=run[-1].parents[0],
        head=newest.head,
        paths=paths,
    )


def chart_dirs_named(entries: Iterable[LogEntry]) -> set[str]:
    """Every directory whose `Chart.yaml` a change in `entries` touched: the charts of the past,
    which the branch's tip may no longer hold."""
    return {
        path.rpartition("/")[0] or "."
        for entry in entries
        for path in entry.paths
        if path == "Chart.yaml" or path.endswith("/Chart.yaml")
    }
