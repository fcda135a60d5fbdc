"""Charts of one review render side by side in the render pool: same charts, same renders, same
order as one after another, and a render two sides share is made once."""

from __future__ import annotations

import io
import tarfile
import threading
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

CHARTS = ("a", "b", "c", "d", "e", "f")


def chart_name(archive: bytes) -> str:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:*") as tar:
        handle = tar.extractfile("chart/Chart.yaml")
        assert handle is not None
        text = handle.read().decode()
    return next(
        line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("name:")
    )


class GatedRenderer:
    """Helm, counting renders by chart. The first render of chart `a` waits until chart `b` has
    begun rendering, which it can only do if charts render side by side (the other workers take
    a's other profiles, then b's)."""

    version = "gated"

    def __init__(self) -> None:
        self.helm = EmbeddedHelm()
        self.b_began = threading.Event()
        self.renders: Counter[str] = Counter()
        self._lock = threading.Lock()

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        name = chart_name(archive)
        with self._lock:
            self.renders[name] += 1
            first_of_a = name == CHARTS[0] and self.renders[name] == 1
        if name == CHARTS[1]:
            self.b_began.set()
        if first_of_a:
            assert self.b_began.wait(60), "chart b never began while chart a was rendering"
        return self.helm.render(archive, values, release, namespace)


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "r")
    for name in CHARTS:
        for path, text in chart_files(f"charts/{name}", name).items():
            g.write(path, text)
    g.commit("charts").branch("pr")
    for name in CHARTS:
        g.write(
            f"charts/{name}/Chart.yaml",
            chart_files(f"charts/{name}", name, "1.0.1")[f"charts/{name}/Chart.yaml"],
        )
    g.write(f"charts/{CHARTS[0]}/values.yaml", "resources: {requests: {cpu: 1, memory: 1Gi}}\n")
    return g.commit("bump every chart; a's values change")


def test_charts_render_side_by_side_and_come_back_in_order(repo: GitBuilder) -> None:
    renderer = GatedRenderer()
    engine = Engine(GitRepo(repo.path), renderer, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", all_charts=True)).report
    assert renderer.b_began.is_set()
    assert [c.path for c in report.charts] == [f"charts/{n}" for n in CHARTS]
    assert all(c.profiles == ("burst", "equal") for c in report.charts)


def test_a_review_of_many_charts_says_what_reviews_of_each_say(repo: GitBuilder) -> None:
    git = GitRepo(repo.path)
    together = Engine(git, EmbeddedHelm(), REGISTRY, RenderCache())
    whole = together.review(ReviewInput(base="develop", head="pr", all_charts=True)).report
    for chart in whole.charts:
        alone = Engine(git, EmbeddedHelm(), REGISTRY, RenderCache())
        one = alone.review(ReviewInput(base="develop", head="pr", charts=(chart.path,))).report
        assert one.charts == (chart,)
        assert one.findings == tuple(f for f in whole.findings if f.chart == chart.path)


def test_a_render_base_and_head_share_is_made_once(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    for name in CHARTS:
        for path, text in chart_files(f"charts/{name}", name).items():
            g.write(path, text)
    g.commit("charts").branch("pr").write("docs/README.md", "# Charts\n").commit("docs only")
    renderer = GatedRenderer()
    renderer.b_began.set()  # nothing to hold back here
    engine = Engine(GitRepo(g.path), renderer, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", all_charts=True)).report
    assert len(report.charts) == len(CHARTS)
    # Base and head are the same trees, their profiles in the pool at once: one render each.
    assert renderer.renders == Counter({name: 2 for name in CHARTS})


class SecondBegins:
    """Helm, whose first render waits until a second, different render has begun: it can only
    if no worker of the pool sits waiting on the render another worker is making."""

    version = "second-begins"

    def __init__(self) -> None:
        self.helm = EmbeddedHelm()
        self.began: list[str] = []
        self.second = threading.Event()
        self._lock = threading.Lock()

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        key = f"{chart_name(archive)} {sorted(values.items())}"
        with self._lock:
            self.began.append(key)
            first = len(self.began) == 1
            if len(set(self.began)) > 1:
                self.second.set()
        if first:
            assert self.second.wait(20), "the other worker never began a render of its own"
        return self.helm.render(archive, values, release, namespace)


def test_a_profile_alike_at_both_sides_holds_one_worker_not_two(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    for path, text in chart_files("charts/a", "a").items():
        g.write(path, text)
    g.commit("chart").branch("pr").write("docs/README.md", "# Charts\n").commit("docs only")
    renderer = SecondBegins()
    engine = Engine(GitRepo(g.path), renderer, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", all_charts=True)).report
    assert report.charts[0].profiles == ("burst", "equal")
    assert len(renderer.began) == 2  # one render per profile, for both sides
