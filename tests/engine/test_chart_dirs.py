"""Which directories are charts: every `Chart.yaml`, less the subcharts vendored under another
chart's `charts/` (chart-testing reviews those as part of their parent)."""

from __future__ import annotations

from bot.model.chart_files import find_charts
from tests.support.qos import DictTree


def _charts(paths: list[str]) -> list[str]:
    return list(find_charts(DictTree(dict.fromkeys(paths, ""))))


def test_vendored_subcharts_are_left_out_at_any_depth() -> None:
    paths = [
        "charts/app/Chart.yaml",
        "charts/app/charts/redis/Chart.yaml",
        "charts/app/charts/redis/charts/common/Chart.yaml",
        "charts/app-charts/Chart.yaml",  # a sibling whose name starts alike: its own chart
        "charts/other/Chart.yaml",
        "charts/other/examples/charts/demo/Chart.yaml",  # `charts/` not right under a chart
        "docs/Chart.yaml.md",
    ]
    assert _charts(paths) == [
        "charts/app",
        "charts/app-charts",
        "charts/other",
        "charts/other/examples/charts/demo",
    ]


def test_a_chart_at_the_root_holds_the_charts_under_its_charts_directory() -> None:
    paths = ["Chart.yaml", "charts/dep/Chart.yaml", "sub/Chart.yaml", "sub/charts/x/Chart.yaml"]
    assert _charts(paths) == [".", "sub"]
