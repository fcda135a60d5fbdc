"""Resources belong to the composition root (bot/charts/resources.py): engines built with different
ones share no thread, no memo entry and no render cache, and importing the engine starts nothing."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.charts.resources import Resources, Sizes
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model import ct_config, manifests
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.versions import practice
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder


class ThreadsSeen:
    """The embedded renderer, noting the thread of every render it is asked for."""

    def __init__(self) -> None:
        self.inner = EmbeddedHelm()
        self.version = self.inner.version
        self.threads: set[threading.Thread] = set()

    def render(self, archive: bytes, values: Mapping[str, Any], *rest: Any) -> dict[str, str]:
        self.threads.add(threading.current_thread())
        return self.inner.render(archive, values, *rest)


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    """A chart whose PR changes its values without a version bump: the version check then reads
    the branch's practice (its first-parent log)."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    return g.branch("pr").write("app/values.yaml", "replicas: 2\n").commit("two replicas")


@pytest.fixture
def two() -> Iterator[tuple[Resources, Resources]]:
    small, large = Resources(Sizes.for_render_workers(1)), Resources(Sizes.for_render_workers(3))
    yield small, large
    small.close()
    large.close()


def memos_of(git: GitRepo) -> dict[str, object]:
    """One memo of each kind the task names: a tree listing, a YAML parse, the ct config, the
    practice's logs."""
    return {
        "listings": git._levels,
        "yaml": manifests._PARSED,
        "ct config": ct_config._CACHE,
        "practice logs": practice._LOGS,
    }


def test_two_engines_share_no_pool_memo_or_render_cache(
    repo: GitBuilder, two: tuple[Resources, Resources]
) -> None:
    small, large = two
    git = GitRepo(repo.path)  # one repository object for both: its listings too are per store
    renderers = ThreadsSeen(), ThreadsSeen()
    engines = [
        Engine(git, renderer, REGISTRY, RenderCache(), resources=resources)
        for renderer, resources in zip(renderers, two, strict=True)
    ]
    first = engines[0].review(ReviewInput(base="develop", head="pr"))
    memos = memos_of(git)
    assert all(small.memos.entries(m) > 0 for m in memos.values()), memos
    assert {name: large.memos.entries(m) for name, m in memos.items()} == dict.fromkeys(memos, 0)

    second = engines[1].review(ReviewInput(base="develop", head="pr"))
    assert second.report == first.report
    assert all(large.memos.entries(m) > 0 for m in memos.values())
    # Each engine rendered for itself: no render of the first's answered the second.
    assert engines[0].cache is not engines[1].cache
    assert renderers[0].threads and renderers[1].threads
    # Each review's renders ran on its own pool's threads, as many as its own sizes allow.
    assert not renderers[0].threads & renderers[1].threads
    assert (small.pools.render.workers, large.pools.render.workers) == (2, 6)
    assert (small.pools.lint.workers, large.pools.lint.workers) == (2, 6)
    for threads, resources in zip((r.threads for r in renderers), two, strict=True):
        assert len(threads) <= resources.pools.render.workers
        assert {t.name.rsplit("_", 1)[0] for t in threads} == {resources.pools.render.prefix}
    assert small.pools.render.prefix != large.pools.render.prefix


def test_closed_resources_end_their_threads_and_empty_their_memos(repo: GitBuilder) -> None:
    resources = Resources(Sizes.for_render_workers(1))
    renderer = ThreadsSeen()
    git = GitRepo(repo.path)
    Engine(git, renderer, REGISTRY, RenderCache(), resources=resources).review(
        ReviewInput(base="develop", head="pr")
    )
    resources.close()
    assert not any(t.is_alive() for t in renderer.threads)
    assert resources.memos.entries(manifests._PARSED) == 0


# Imported in a fresh interpreter: the engine, the chart pipeline and the command line; an engine
# made too, which builds nothing until it reviews.
FRESH = """
import threading
import bot.cli.main, bot.engine.review, bot.charts.renders
from bot.charts.resources import Resources
Resources()
print(sorted(t.name for t in threading.enumerate()))
"""


def test_importing_the_review_path_starts_no_thread() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, text=True, check=True, timeout=120
    )
    assert proc.stdout.split() == ["['MainThread']"]
