"""What the integration branch's history says about bumping a chart's version, for a repository
that declares nothing (bot/versions/policy.py reads what it declares first).

The chart's recent changes on the branch's first-parent history (where each PR is one commit,
however it was merged) are read oldest to newest. Each is a *content change*, which bumped the
version itself or not, or a *release commit*: one that moved the version and nothing a release
ships (`Chart.yaml` and the changelog), or one whose subject says it is a release (`chore: kong
chart 3.4.1 release`). Release commits are no evidence that PRs bump; they are evidence that
versions move at release.

The verdict is walked along that history, each change moving it at most one level, and only when
the last WINDOW content changes lean past even by MARGIN changes: from the default (a bump is
expected, a warning) down to "bumps at release" (a notice) once MARGIN more did not bump than did,
up again once MARGIN more did; up to "bumps per change" (a failure) only when every one of at
least UNANIMOUS recent content changes bumped and no release commit moved the version, down again
once MARGIN of them did not. So the verdict of two consecutive PRs differs by one level at most,
and never on one vote.

History that is cut short (a shallow clone) is said, and not learned from; too little history is
the default, unless the chart was never released (no practice to learn: a notice)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bot.git.history import LogEntry
from bot.git.objects import GitView, Tree
from bot.git.shallow import FIX as UNSHALLOW_FIX
from bot.git.shallow import is_shallow
from bot.lru import BoundedCache
from bot.model.chart_files import (
    HELMIGNORE,
    chart_file,
    content_paths,
    in_chart,
    read_chart_meta,
)
from bot.versions.rule import Basis, BumpRule, Level
from bot.versions.semver import parse_version

# How many recent content changes make the window the verdict reads, how many are walked through
# to reach it, how deep the first-parent history is read to find them (one `git log` of the
# chart's directory per chart), and the evidence's thresholds.
WINDOW = 20
WALKED = 2 * WINDOW
RECENT_CHANGES = WINDOW
HISTORY_DEPTH = 1000
MIN_EVIDENCE = 3
MARGIN = 2
UNANIMOUS = 10
# Versions that mean "not versioned here": Helm's `helm create` default and the zeros a release
# pipeline overwrites. A chart whose version stayed at one through its history is stamped later.
PLACEHOLDERS = frozenset({"0.0.0", "0.0.1", "0.1.0"})
# A subject that names a release with its version: `chore(release): publish 41.3.0`, `Release
# v0.34.1 preparation`, `chore: kong chart 3.4.1 release`, `chore(release): 2.1.0`; not `update
# helm release x to v2` (a dependency) nor `fix: release-name template`. Read on the subject's
# first SUBJECT_CHARS characters, so a crafted subject costs nothing.
RELEASE_SUBJECT_RE = re.compile(
    r"^(?:[a-z]+(?:\([^)]{0,40}\))?!?:\s*)?(?:\[[^\]]{0,40}\]\s*)?"
    r"(?:release|publish|prepare|preparing|cut)\b[^\n]{0,60}?\bv?\d+\.\d+\.\d+"
    r"|\bv?\d+\.\d+\.\d+\S{0,20}\s+release\b"
    r"|^[a-z]+\(release\)!?:\s*v?\d+\.\d+\.\d+",
    re.IGNORECASE,
)
SUBJECT_CHARS = 200

# How many charts' practices at one tip are read from their own directory's history; past them,
# one log of the whole tree serves every chart.
CHARTS_READ_ALONE = 2
# (tip, chart) → the chart's changes among the tip's newest HISTORY_DEPTH first-parent commits;
# (tip, None) → every change among them. And how many charts were asked about at each tip.
_LOGS: BoundedCache[tuple[str, str | None], tuple[LogEntry, ...]] = BoundedCache(
    8 * HISTORY_DEPTH, lambda log: 1 + len(log)
)
_ASKED: BoundedCache[str, int] = BoundedCache(64)
_LEARNED: BoundedCache[tuple[str, str, tuple[str, ...], bool, bool], BumpRule] = BoundedCache(256)


@runtime_checkable
class FirstParentHistory(Protocol):
    """The git view that can list a branch's first-parent history (`GitRepo` can)."""

    def first_parent_changes(self, rev: str, depth: int, path: str) -> list[LogEntry]: ...

    def first_parent_log(
        self, rev: str, since: int | None = None, max_count: int | None = None
    ) -> list[LogEntry]: ...

    def shallow_commits(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class _Change:
    entry: LogEntry
    content: bool  # it changed the chart's released content
    before: str | None = None  # the chart's version before it; None: the chart was new
    after: str | None = None

    @property
    def bumped(self) -> bool:
        return self.before != self.after

    @property
    def release(self) -> bool:
        """It moved the version at release: nothing else, or a subject that says so."""
        return self.bumped and (
            not self.content or bool(RELEASE_SUBJECT_RE.search(self.entry.subject[:SUBJECT_CHARS]))
        )

    @property
    def vote(self) -> bool:
        """A content change that counts as evidence of how PRs version the chart."""
        return self.content and not self.release


def learned_rule(
    git: GitView, tip: Tree, chart_path: str, ignore: Sequence[str], released: bool, branch: str
) -> BumpRule:
    """The rule the history of the branch at `tip` shows for the chart at `chart_path`;
    `released`: whether the repository shows any release of the chart. Remembered per (tip,
    chart, ignore globs, released), which fix the answer."""
    if not isinstance(git, FirstParentHistory):
        return _say(Level.EXPECTED, Basis.NO_HISTORY, branch)
    # A commit id fixes the history behind it, unless the clone holding it is shallow.
    key = (tip.commit, chart_path, tuple(ignore), released, is_shallow(git))
    return _LEARNED.get_or_make(
        key, lambda: _learn(git, git, tip, chart_path, ignore, released, branch)
    )


def _learn(
    git: GitView,
    history: FirstParentHistory,
    tip: Tree,
    chart_path: str,
    ignore: Sequence[str],
    released: bool,
    branch: str,
) -> BumpRule:
    log = chart_history(history, tip.commit, chart_path)
    if _cut_short(history, log):
        return _say(Level.EXPECTED, Basis.HISTORY_CUT, branch)
    helmignore = tip.text(HELMIGNORE if chart_path == "." else f"{chart_path}/{HELMIGNORE}")
    recent = []
    for entry in log:
        paths = [p for p in entry.paths if in_chart(p, chart_path)]
        if paths and entry.parents:
            recent.append(
                _Change(entry, bool(content_paths(paths, chart_path, ignore, helmignore)))
            )
            if sum(c.content for c in recent) >= WALKED:
                break
    meta = read_chart_meta(tip, chart_path)
    version = (meta.version or "").strip() if meta is not None else None
    changes = _with_versions(git, recent, chart_path, version)
    return _judge(list(reversed(changes)), version, released, branch)


def _cut_short(history: FirstParentHistory, log: Sequence[LogEntry]) -> bool:
    """Whether the history read ends at a shallow clone's boundary rather than at the chart's
    creation or HISTORY_DEPTH: what lies beyond is missing, not absent."""
    shallow = history.shallow_commits()
    if not shallow:
        return False
    return not log or len(log) < HISTORY_DEPTH and any(e.sha in shallow for e in log[-1:])


def chart_history(history: FirstParentHistory, tip: str, chart_path: str) -> tuple[LogEntry, ...]:
    """The tip's newest HISTORY_DEPTH first-parent commits, with the paths they change: the
    chart's directory's alone for the first charts asked about at a tip (one chart's log costs a
    few milliseconds, the whole tree's tens), the whole tree's, shared, from the next one on (a PR
    that touches thirty charts). Callers keep to the chart's paths either way."""
    if is_shallow(history):  # its log of a commit is not the full history's: not kept
        return tuple(history.first_parent_changes(tip, HISTORY_DEPTH, chart_path))
    known = _LOGS.get((tip, None)) or _LOGS.get((tip, chart_path))
    if known is not None:
        return known
    asked = (_ASKED.get(tip) or 0) + 1
    _ASKED.put(tip, asked)
    if asked > CHARTS_READ_ALONE:
        return _LOGS.get_or_make(
            (tip, None), lambda: tuple(history.first_parent_log(tip, max_count=HISTORY_DEPTH))
        )
    return _LOGS.get_or_make(
        (tip, chart_path),
        lambda: tuple(history.first_parent_changes(tip, HISTORY_DEPTH, chart_path)),
    )


def _with_versions(
    git: GitView, recent: list[_Change], chart_path: str, current: str | None
) -> list[_Change]:
    """`recent` (newest first) with the chart's version before and after each, down to the commit
    that added the chart; `current` is the version at the tip. Only commits that touched
    `Chart.yaml` are read, once each: between two of them on the first-parent line the version
    cannot move."""
    file = chart_file(chart_path)
    touching = [c.entry for c in recent if file in c.entry.paths]
    after = {e.sha: _version_at(git, e.sha, chart_path) for e in touching}
    before = {
        e.sha: after[touching[i + 1].sha]
        if i + 1 < len(touching)
        else _version_at(git, e.parents[0], chart_path)
        for i, e in enumerate(touching)
    }
    out = []
    for change in recent:
        sha = change.entry.sha
        was, now = (before[sha], after[sha]) if sha in after else (current, current)
        if was is None:
            break  # the chart was added here (or re-added): nothing to bump from, older is not it
        out.append(_Change(change.entry, change.content, was, now))
        current = was
    return out


def _version_at(git: GitView, sha: str, chart_path: str) -> str | None:
    """The chart's version at `sha` ("" when its `Chart.yaml` has none), None without a chart."""
    meta = read_chart_meta(git.tree(sha), chart_path)
    return None if meta is None else (meta.version or "").strip()


@dataclass(frozen=True)
class _Window:
    changes: int
    bumped: int
    releases: int

    @property
    def lean(self) -> int:
        """How many more of the window's content changes bumped than did not."""
        return 2 * self.bumped - self.changes


def _judge(
    oldest_first: list[_Change], version: str | None, released: bool, branch: str
) -> BumpRule:
    level, window = _walk(oldest_first)
    if window.changes < MIN_EVIDENCE and level is Level.EXPECTED:
        basis = Basis.TOO_FEW if released else Basis.NEVER_RELEASED
        level = Level.EXPECTED if released else Level.NOT_ENFORCED
        return _say(level, basis, branch, window)
    parsed = parse_version(version)
    moved = any(c.bumped for c in oldest_first)
    if (
        level is not Level.ENFORCED
        and not moved
        and parsed is not None
        and str(parsed) in PLACEHOLDERS
        and window.changes >= MIN_EVIDENCE
    ):
        return _say(Level.NOT_ENFORCED, Basis.PLACEHOLDER, branch, window, str(parsed))
    basis = Basis.RELEASES if level is Level.NOT_ENFORCED else Basis.BUMPS
    return _say(level, basis, branch, window)


def _walk(oldest_first: Sequence[_Change]) -> tuple[Level, _Window]:
    """The verdict after each change in turn, from the default, and the last window read."""
    level = Level.EXPECTED
    votes: list[int] = []  # indexes of the content changes counted
    window = _Window(0, 0, 0)
    for i, change in enumerate(oldest_first):
        if change.vote:
            votes.append(i)
        elif not change.release:
            continue
        counted = votes[-WINDOW:]
        since = counted[0] if counted else i
        releases = sum(1 for c in oldest_first[since : i + 1] if c.release)
        bumped = sum(1 for j in counted if oldest_first[j].bumped)
        window = _Window(len(counted), bumped, releases)
        level = _step(level, window)
    return level, window


def _step(level: Level, w: _Window) -> Level:
    """One change's move: at most one level, and only past the margin."""
    if level is Level.ENFORCED:
        return Level.EXPECTED if (w.changes - w.bumped) + w.releases >= MARGIN else level
    if level is Level.EXPECTED:
        if w.changes >= UNANIMOUS and w.bumped == w.changes and w.releases == 0:
            return Level.ENFORCED
        return Level.NOT_ENFORCED if -w.lean >= MARGIN else level
    return Level.EXPECTED if w.lean >= MARGIN else level


def _say(
    level: Level,
    basis: Basis,
    branch: str,
    window: _Window = _Window(0, 0, 0),
    version: str | None = None,
) -> BumpRule:
    return BumpRule(
        level,
        basis,
        _sentence(basis, level, branch, window, version),
        changes=window.changes,
        bumped=window.bumped,
        releases=window.releases,
    )


def _figure(w: _Window, branch: str) -> str:
    recent = "recent content change" if w.changes == 1 else "recent content changes"
    released = ""
    if w.releases:
        commits = "commit" if w.releases == 1 else "commits"
        released = f", and {w.releases} release {commits} moved it"
    return (
        f"{w.bumped} of {w.changes} {recent} to this chart on {branch} bumped its version{released}"
    )


def _sentence(basis: Basis, level: Level, branch: str, w: _Window, version: str | None) -> str:
    if basis is Basis.BUMPS and level is Level.ENFORCED:
        return f"This repository bumps per change: {_figure(w, branch)}, none at release."
    if basis is Basis.BUMPS:
        return f"This repository leans to bumping per change: {_figure(w, branch)}."
    if basis is Basis.RELEASES:
        return (
            f"Not enforced: {_figure(w, branch)}, so this repository moves the version at "
            "release rather than in each PR."
        )
    if basis is Basis.PLACEHOLDER:
        return (
            f"Not enforced: the version is a placeholder, {version} through the last "
            f"{w.changes} changes to this chart on {branch}, stamped at release."
        )
    earlier = "earlier change" if w.changes == 1 else "earlier changes"
    if basis is Basis.TOO_FEW:
        return (
            f"{branch} has only {w.changes} {earlier} to this chart to learn the repository's "
            "practice from, so a bump is expected, as by default."
        )
    if basis is Basis.NEVER_RELEASED:
        return (
            "Not enforced: no release of this chart is on record and "
            f"{branch} has only {w.changes} {earlier} to it, so there is no practice to learn."
        )
    if basis is Basis.HISTORY_CUT:
        return (
            f"The history of {branch} is cut short (a shallow clone: {UNSHALLOW_FIX}), so nothing "
            "was learned from it; a bump is expected, as by default."
        )
    return f"The history of {branch} cannot be read here, so a bump is expected, as by default."
