"""The bump rule for a chart, from what the repository declares, then what it has released, and only
then what its history shows (ARCHITECTURE.md's version policy):

1. declared (bot/versions/declared.py): the config, the CI that runs `ct lint` or a version
   guard, release tooling, an Unreleased changelog section;
2. released (bot/versions/releases.py): where the integration branch's version of the chart is not
   released yet, whatever the PR adds ships in it, so no second bump is needed;
3. learned (bot/versions/practice.py): the walk over the chart's recent changes.

Every part reads the target branch (declarations) or the integration branch (releases, history),
never the PR."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.git.objects import GitView, Tree
from bot.model.chart_files import read_chart_meta
from bot.model.ci.tooling import pages_branch
from bot.versions.declared import declared_rule
from bot.versions.practice import FirstParentHistory, chart_history, learned_rule
from bot.versions.releases import ReleaseState, release_state
from bot.versions.rule import Basis, BumpRule, Level


def bump_rule(
    git: GitView,
    target: Tree,
    develop: Tree,
    chart_path: str,
    bump: str | Mapping[str, str] | None,
    ignore: Sequence[str],
    branch: str,
    as_of: int | None = None,
) -> BumpRule:
    """The rule for the chart at `chart_path`: `target` the tip of the branch the PR targets (whose
    files declare), `develop` the integration branch's (whose releases and history tell);
    `bump` the config's `version.bump`; `branch` how messages name the integration branch;
    `as_of` the time of a replayed review (None: now)."""
    history = (
        chart_history(git, develop.commit, chart_path)
        if isinstance(git, FirstParentHistory)
        else ()
    )
    declared = declared_rule(
        target, chart_path, bump, history, lambda sha, path: git.tree(sha).text(path)
    )
    if declared is not None:
        return declared
    meta = read_chart_meta(develop, chart_path)
    name = (meta.name or "") if meta is not None else ""
    sole = chart_path == "." or develop.dirs_with("Chart.yaml") == (chart_path,)
    version = (meta.version or "").strip() if meta is not None else None
    state = release_state(
        git, develop.commit, chart_path, name, version, sole, pages_branch(target), as_of
    )
    if state.released is False:
        return _unreleased(version or "", state, branch)
    return learned_rule(git, develop, chart_path, ignore, state.source is not None, branch)


def _unreleased(version: str, state: ReleaseState, branch: str) -> BumpRule:
    said = (
        f"Not enforced: {branch}'s version {version} is not released yet (by {state.source}), "
        "so this change ships in it."
    )
    return BumpRule(Level.NOT_ENFORCED, Basis.UNRELEASED, said, state.source)
