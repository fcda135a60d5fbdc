"""A review of more charts than a window checks them a window at a time and lets their renders go
(bot/engine/chart_windows.py): what it reports is what the review of one window reports, the
suggestions' budget spans the windows, and the duplicates check still reads what it compares."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.engine.review import Engine, ReviewInput, ReviewResult
from bot.engine.suggestions import MAX_RENDERS, OVER_BUDGET
from bot.errors import ChartReviewError
from bot.git.repo import GitRepo
from bot.model.context import OpenPR
from bot.model.report import Report
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder
from tests.support.manifests import guaranteed_web, shipper

WEB = guaranteed_web(replicas="{{ .Values.replicas }}")
# A sidecar with a memory limit and no CPU limit: the pod falls from Guaranteed to Burstable, and
# the QoS check suggests the limits that keep it Guaranteed (a suggestion to verify).
SIDECAR = shipper()
BROKEN = "{{ .Values.missing.field }}\n"


def chart_yaml(name: str, version: str = "1.0.0") -> str:
    return f"apiVersion: v2\nname: {name}\nversion: {version}\n"


def charts_repo(tmp_path: Path, downgraded: int, untouched: int) -> GitBuilder:
    """`downgraded` charts (c00, c01...) whose PR adds the sidecar and bumps the version, one more
    whose head fails to render, and `untouched` charts the PR leaves alone."""
    g = GitBuilder(tmp_path / "repo")
    names = [f"c{i:02d}" for i in range(downgraded + 1 + untouched)]
    for name in names:
        g.write(f"{name}/Chart.yaml", chart_yaml(name))
        g.write(f"{name}/values.yaml", "replicas: 1\n")
        g.write(f"{name}/templates/web.yaml", WEB)
        g.write(f"{name}/ci/small-values.yaml", "replicas: 2\n")
    g.commit("charts").branch("pr")
    for name in names[:downgraded]:
        g.write(f"{name}/Chart.yaml", chart_yaml(name, "1.1.0"))
        g.write(f"{name}/templates/web.yaml", WEB + SIDECAR)
    broken = names[downgraded]
    g.write(f"{broken}/Chart.yaml", chart_yaml(broken, "1.1.0"))
    g.write(f"{broken}/templates/broken.yaml", BROKEN)
    return g.commit("the pull request")


def review(g: GitBuilder, window: int, **given: object) -> ReviewResult:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache(), window=window)
    return engine.review(ReviewInput(base="develop", head="pr", **given))  # type: ignore[arg-type]


def as_json(report: Report) -> dict[str, object]:
    return report.to_json()


def test_windows_report_what_one_window_reports(tmp_path: Path) -> None:
    """Twelve suggestions of one severity, one a chart, each proven on its profile: the budget
    verifies the first charts' whichever the windows and refuses the rest; a window that began a
    budget of its own would verify them all."""
    g = charts_repo(tmp_path, downgraded=12, untouched=3)
    together = review(g, window=100, all_charts=True)
    windowed = review(g, window=4, all_charts=True)
    assert as_json(windowed.report) == as_json(together.report)
    downgrades = [f for f in windowed.report.findings_for("qos") if f.rule == "downgrade"]
    assert len(downgrades) == 12
    proven = {f.chart: f.suggestion.verified_on for f in downgrades if f.suggestion is not None}
    refused = {f.chart for f in downgrades if f.suggestion_refused == OVER_BUDGET}
    assert sum(len(profiles) for profiles in proven.values()) == MAX_RENDERS
    # The charts in order: the first ones' proven, and once spent, the rest refused.
    assert sorted(proven) == [f"c{i:02d}" for i in range(len(proven))]
    assert sorted(refused) == [f"c{i:02d}" for i in range(len(proven), 12)]
    assert [c.path for c in windowed.report.charts] == [f"c{i:02d}" for i in range(16)]
    assert windowed.report.findings_for("render"), "the broken chart's render error is reported"


def test_a_review_of_more_charts_than_a_window_lets_their_renders_go(tmp_path: Path) -> None:
    g = charts_repo(tmp_path, downgraded=2, untouched=3)
    together = review(g, window=100, all_charts=True)
    windowed = review(g, window=2, all_charts=True)
    assert all(c.base and c.head for c in together.context.charts if c.path != "c02")
    kept = windowed.context.charts
    assert [c.path for c in kept] == [c.path for c in together.context.charts]
    assert all(not c.base and not c.head for c in kept)
    # What the report says of each chart was taken before its renders went.
    assert [s.profiles for s in windowed.report.charts] == [("small",)] * 6


def test_the_duplicates_check_keeps_the_charts_whose_rendered_change_it_compares(
    tmp_path: Path,
) -> None:
    """The other PR changes c00's Deployment as this one does, by another text, and makes the
    same edit to c03's README: the one found by the renders kept, the other by the paths of the
    charts whose renders went."""
    g = GitBuilder(tmp_path / "repo")
    for name in ("c00", "c01", "c02", "c03"):
        g.write(f"{name}/Chart.yaml", chart_yaml(name)).write(
            f"{name}/values.yaml", "replicas: 1\n"
        )
        g.write(f"{name}/templates/web.yaml", WEB).write(f"{name}/README.md", "# Chart\n")
    g.commit("charts")
    readme = "# Chart\n\nInstall it with `helm install`.\n"
    g.branch("pr", "develop")
    g.write("c00/values.yaml", "replicas: 3\n").write("c03/README.md", readme).commit("mine")
    g.branch("theirs", "develop").write(
        "c00/templates/web.yaml", WEB.replace("{{ .Values.replicas }}", "3")
    ).write("c03/README.md", readme).commit("theirs").checkout("develop")
    others = (OpenPR(7, g.sha("theirs"), "theirs", title="Three web replicas"),)
    given = {"all_charts": True, "open_prs": others, "only_checks": ("duplicates",)}
    together = review(g, window=100, **given)
    windowed = review(g, window=1, **given)
    assert as_json(windowed.report) == as_json(together.report)
    (found,) = windowed.report.findings_for("duplicates")
    assert found.data["objects"] == [
        {"chart": "c00", "object": "Deployment/default/release-web", "profiles": ["default"]}
    ]
    assert [h["path"] for h in found.data["hunks"]] == ["c03/README.md"]
    kept = {c.path: bool(c.base) for c in windowed.context.charts}
    assert kept == {"c00": True, "c01": False, "c02": False, "c03": False}


def test_progress_is_told_each_chart_in_order(tmp_path: Path) -> None:
    g = charts_repo(tmp_path, downgraded=1, untouched=3)
    told: list[tuple[int, int, str]] = []
    review(g, window=2, all_charts=True, progress=lambda *said: told.append(said))
    assert told == [(n + 1, 5, f"c{n:02d}") for n in range(5)]


def test_a_profile_no_chart_has_is_refused_whichever_the_windows(tmp_path: Path) -> None:
    g = charts_repo(tmp_path, downgraded=1, untouched=3)
    with pytest.raises(ChartReviewError, match="--profile large: no chart under review has"):
        review(g, window=2, all_charts=True, profiles=("large",))
    small = review(g, window=2, all_charts=True, profiles=("small",))
    assert {s.profiles for s in small.report.charts} == {("small",)}
