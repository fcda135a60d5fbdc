"""Whether a chart keeps `appVersion` equal to `version`, learned from the integration branch's
recent versions of it: appVersion drift is a finding only where the chart keeps them equal."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.git.objects import GitView, Tree
from bot.lru import BoundedCache
from bot.model.chart_files import ChartMeta, chart_file, read_chart_meta
from bot.versions.practice import (
    MIN_EVIDENCE,
    RECENT_CHANGES,
    FirstParentHistory,
    chart_history,
)


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
    for entry in chart_history(history, tip.commit, chart_path):
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
