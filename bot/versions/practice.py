"""Whether this repository bumps a chart's version in every PR that changes the chart, learned from
its integration branch before a missing bump is called a failure.

Many chart repositories do not: their PRs change content and a release commit moves the version
later (`chore(release): publish 41.3.0`), or the version in git is a placeholder (`0.0.0`) that the
release pipeline stamps. Demanding a bump there fails every PR for nothing. So the recent changes
to the chart on the integration branch's first-parent history (where each PR is one commit,
however it was merged) are counted: a missing bump is enforced where at least half of them bumped
the chart, and where there is too little history to tell and what there is does not say otherwise
(today's rule, said so); elsewhere it is a notice that says why. The repository's `ct.yaml`
saying `check-version-increment: false` settles it without history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from bot.engine.chart.files import (
    HELMIGNORE,
    ChartMeta,
    chart_file,
    content_paths,
    in_chart,
    read_chart_meta,
)
from bot.engine.ct_config import CtConfig
from bot.git.history import LogEntry
from bot.git.objects import GitView, Tree
from bot.lru import BoundedCache
from bot.versions.semver import parse_version

# How many recent changes to the chart are counted, how deep the first-parent history is read to
# find them (one `git log` of the chart's directory per chart), and how many make evidence. Fewer than that and the default rule (bump every change) stands.
RECENT_CHANGES = 20
HISTORY_DEPTH = 1000
MIN_EVIDENCE = 3
# Versions that mean "not versioned here": Helm's `helm create` default and the zeros a release
# pipeline overwrites. A chart whose version stayed at one through its history is stamped later.
PLACEHOLDERS = frozenset({"0.0.0", "0.0.1", "0.1.0"})

# How many charts' practices at one tip are read from their own directory's history; past them,
# one log of the whole tree serves every chart.
CHARTS_READ_ALONE = 2
# (tip, chart) → the chart's changes among the tip's newest HISTORY_DEPTH first-parent commits;
# (tip, None) → every change among them. And how many charts were asked about at each tip.
_LOGS: BoundedCache[tuple[str, str | None], tuple[LogEntry, ...]] = BoundedCache(
    8 * HISTORY_DEPTH, lambda log: 1 + len(log)
)
_ASKED: BoundedCache[str, int] = BoundedCache(64)
_PRACTICES: BoundedCache[tuple[str, str, tuple[str, ...]], Practice] = BoundedCache(256)


@runtime_checkable
class FirstParentHistory(Protocol):
    """The git view that can list a branch's first-parent history (`GitRepo` can)."""

    def first_parent_changes(self, rev: str, depth: int, path: str) -> list[LogEntry]: ...

    def first_parent_log(
        self, rev: str, since: int | None = None, max_count: int | None = None
    ) -> list[LogEntry]: ...


class Basis(StrEnum):
    """Why a missing bump is enforced or not; the value goes into the finding's data."""

    BUMPS = "bumps-per-change"  # at least half of the recent changes bumped: enforced
    TOO_FEW = "too-few-changes"  # not enough history to learn from: enforced, as by default
    NO_HISTORY = "no-history"  # the view has no history: enforced, as by default
    RELEASES = "bumps-at-release"  # most recent changes did not bump: not enforced
    PLACEHOLDER = "placeholder-version"  # the version never moved: not enforced
    CT_OFF = "ct-check-version-increment-off"  # ct.yaml says so: not enforced


ENFORCED = frozenset({Basis.BUMPS, Basis.TOO_FEW, Basis.NO_HISTORY})


@dataclass(frozen=True)
class Practice:
    basis: Basis
    changes: int = 0  # recent changes to the chart's content on the branch
    bumped: int = 0  # those that also changed its version
    version: str | None = None  # the version that stayed put (placeholder)
    source: str | None = None  # the ct config file that decided

    @property
    def enforced(self) -> bool:
        return self.basis in ENFORCED

    def figure(self, branch: str) -> str:
        recent = "recent change" if self.changes == 1 else "recent changes"
        return (
            f"{self.bumped} of {self.changes} {recent} to this chart on {branch} bumped its version"
        )

    def reason(self, branch: str) -> str:
        """One sentence for the finding: what the repository does, and so what is expected."""
        if self.basis is Basis.BUMPS:
            return f"This repository bumps per change: {self.figure(branch)}."
        if self.basis is Basis.TOO_FEW:
            earlier = "earlier change" if self.changes == 1 else "earlier changes"
            return (
                f"{branch} has only {self.changes} {earlier} to this chart to learn the "
                "repository's practice from, so a bump is expected as by default."
            )
        if self.basis is Basis.RELEASES:
            return (
                f"Not enforced: only {self.figure(branch)}, so this repository moves the version "
                "at release rather than in each PR."
            )
        if self.basis is Basis.PLACEHOLDER:
            return (
                f"Not enforced: the version is a placeholder, {self.version} through the last "
                f"{self.changes} changes to this chart on {branch}, stamped at release."
            )
        if self.basis is Basis.CT_OFF:
            return f"Not enforced: `{self.source}` sets `check-version-increment: false`."
        return ""

    def to_json(self) -> dict[str, Any]:
        return {
            "basis": str(self.basis),
            "enforced": self.enforced,
            "changes": self.changes,
            "bumped": self.bumped,
        }


def chart_practice(
    git: GitView, tip: Tree, chart_path: str, ignore: Sequence[str], ct: CtConfig
) -> Practice:
    """The practice for the chart at `chart_path`, from the history of the branch at `tip`;
    remembered per (tip, chart, ignore globs), which fix the answer."""
    if not ct.check_version_increment:
        return Practice(Basis.CT_OFF, source=ct.source)
    if not isinstance(git, FirstParentHistory):
        return Practice(Basis.NO_HISTORY)
    key = (tip.commit, chart_path, tuple(ignore))
    return _PRACTICES.get_or_make(key, lambda: _learn(git, git, tip, chart_path, ignore))


@dataclass(frozen=True)
class _Change:
    entry: LogEntry
    content: bool  # it changed the chart's released content
    before: str | None = None  # the chart's version before it; None: the chart was new
    after: str | None = None


def _learn(
    git: GitView, history: FirstParentHistory, tip: Tree, chart_path: str, ignore: Sequence[str]
) -> Practice:
    log = _history(history, tip.commit, chart_path)
    helmignore = tip.text(HELMIGNORE if chart_path == "." else f"{chart_path}/{HELMIGNORE}")
    recent = []
    for entry in log:
        paths = [p for p in entry.paths if in_chart(p, chart_path)]
        if paths and entry.parents:
            recent.append(
                _Change(entry, bool(content_paths(paths, chart_path, ignore, helmignore)))
            )
            if sum(c.content for c in recent) >= RECENT_CHANGES:
                break
    meta = read_chart_meta(tip, chart_path)
    version = (meta.version or "").strip() if meta is not None else None
    changes = _with_versions(git, recent, chart_path, version)
    counted = [c for c in changes if c.content]
    bumped = sum(c.before != c.after for c in counted)
    moved = any(c.before != c.after for c in changes)
    return _judge(len(counted), bumped, moved, version)


def _history(history: FirstParentHistory, tip: str, chart_path: str) -> tuple[LogEntry, ...]:
    """The tip's newest HISTORY_DEPTH first-parent commits, with the paths they change: the
    chart's directory's alone for the first charts asked about at a tip (one chart's log costs a
    few milliseconds, the whole tree's tens), the whole tree's, shared, from the next one on (a PR
    that touches thirty charts). `_learn` keeps to the chart's paths either way."""
    shared = _LOGS.get((tip, None))
    if shared is not None:
        return shared
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


def _judge(changes: int, bumped: int, moved: bool, version: str | None) -> Practice:
    # Too few changes to learn from: the default rule stands, unless what few there are went the
    # other way (kedacore's new cosmos-db chart: none of its changes bumped it; the repository
    # moves versions at release).
    if changes < MIN_EVIDENCE:
        basis = Basis.TOO_FEW if bumped * 2 >= changes else Basis.RELEASES
        return Practice(basis, changes, bumped)
    if bumped * 2 >= changes:
        return Practice(Basis.BUMPS, changes, bumped)
    parsed = parse_version(version)
    if not moved and parsed is not None and str(parsed) in PLACEHOLDERS:
        return Practice(Basis.PLACEHOLDER, changes, bumped, version=str(parsed))
    return Practice(Basis.RELEASES, changes, bumped)


# -- whether the chart keeps appVersion equal to version ------------------------------------------


@dataclass(frozen=True)
class AppVersionHabit:
    """How the chart's recent versions on the integration branch set `appVersion`: equal to
    `version` in each, or not. One equal pair proves nothing: DataDog's worker chart releases the
    app's version as the chart's (2.20.0 / 2.20.0) and then patches the chart alone (2.20.1 /
    2.20.0)."""

    versions: int  # the chart's recent distinct versions, the tip's included
    equal: int  # those whose appVersion was the same text

    @property
    def keeps_equal(self) -> bool | None:
        """True where every one of enough versions kept them equal, False where one did not, None
        where too few versions tell."""
        if self.equal < self.versions:
            return False
        return True if self.versions >= MIN_EVIDENCE else None

    def figure(self, branch: str) -> str:
        return f"its last {self.versions} versions on {branch} all had `appVersion` equal to it"


_HABITS: BoundedCache[tuple[str, str], AppVersionHabit] = BoundedCache(256)


def app_version_habit(git: GitView, tip: Tree, chart_path: str) -> AppVersionHabit:
    """The habit of the chart at `chart_path` over the RECENT_CHANGES newest versions the branch
    at `tip` gave it (each commit that touched its `Chart.yaml`, read once); remembered per (tip,
    chart). Asked only where appVersion and version part, so the reading is rare."""
    if not isinstance(git, FirstParentHistory):
        return _habit([read_chart_meta(tip, chart_path)])
    key = (tip.commit, chart_path)
    return _HABITS.get_or_make(key, lambda: _habit(_recent_metas(git, git, tip, chart_path)))


def _recent_metas(
    git: GitView, history: FirstParentHistory, tip: Tree, chart_path: str
) -> list[ChartMeta | None]:
    file = chart_file(chart_path)
    metas = [read_chart_meta(tip, chart_path)]
    for entry in _history(history, tip.commit, chart_path):
        if len(metas) > RECENT_CHANGES:
            break
        if file in entry.paths and entry.parents:
            metas.append(read_chart_meta(git.tree(entry.parents[0]), chart_path))
    return metas


def _habit(metas: Sequence[ChartMeta | None]) -> AppVersionHabit:
    seen: dict[str, bool] = {}
    for meta in metas:
        if meta is None:
            break  # the chart was not there: what came before is another chart's history
        if meta.version and meta.version not in seen:
            seen[meta.version] = meta.app_version == meta.version
    return AppVersionHabit(len(seen), sum(seen.values()))
