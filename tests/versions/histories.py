"""Integration-branch histories for the version-practice tests: a chart, PRs landing on develop
(squashed, or merged with a merge commit), and release commits that move only the version."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitbuilder import GitBuilder
from tests.support.version_scenario import chart_yaml, write_chart


def chart_repo(root: Path, version: str = "1.0.0", chart: str = "client") -> GitBuilder:
    g = GitBuilder(root)
    return write_chart(g, chart, chart.rsplit("/", 1)[-1], version).commit(f"{chart} {version}")


def land(
    g: GitBuilder,
    number: int,
    bump_to: str | None = None,
    chart: str = "client",
    merge: bool = False,
) -> GitBuilder:
    """PR `number` lands on develop: it changes the chart's values and, with `bump_to`, its
    version. Squashed (`… (#N)`), or with `merge` as a branch of two commits (the change, then the
    bump) merged by a merge commit."""
    name = chart.rsplit("/", 1)[-1]
    g.checkout("develop")
    if merge:
        g.branch(f"feature-{number}")
    g.write(f"{chart}/values.yaml", f"replicas: {100 + number}\n")
    if merge:
        g.commit(f"change {number}")
    if bump_to:
        g.write(f"{chart}/Chart.yaml", chart_yaml(bump_to, name=name))
    if not merge:
        return g.commit(f"change {number} (#{number})")
    g.commit(f"bump to {bump_to}" if bump_to else f"more of {number}").checkout("develop")
    return g.merge(f"feature-{number}", f"Merge pull request #{number} from org/feature-{number}")


def release(g: GitBuilder, version: str, chart: str = "client") -> GitBuilder:
    """A release commit: the version moves, and the changelog; no content."""
    name = chart.rsplit("/", 1)[-1]
    g.checkout("develop").write(f"{chart}/Chart.yaml", chart_yaml(version, name=name))
    g.write(f"{chart}/CHANGELOG.md", f"## {version}\n")
    return g.commit(f"chore(release): publish {version}")


def touch_ci(g: GitBuilder, number: int, chart: str = "client") -> GitBuilder:
    """A change to the chart's CI values only: not released content."""
    g.checkout("develop").write(f"{chart}/ci/default-values.yaml", f"replicas: {number}\n")
    return g.commit(f"ci {number} (#{number})")
