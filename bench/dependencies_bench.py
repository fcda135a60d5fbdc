"""A chart with three dependencies from a chart repository: its review, cold (nothing in the
machine's dependency store) and warm, next to the renders it makes; and, for comparison, the same
chart without dependencies.

The chart repository is served by this benchmark on 127.0.0.1 (charts packaged and indexed with
helm-python-sdk). Each review is a new engine with an empty render cache, so every review renders;
what differs is where the dependencies come from: the network (cold) or the store (warm). Reported:
each review, the raw renders it handed the renderer (timed alone afterwards, as many at once as the
engine renders), and their ratio. Target: warm within the 1.5x of a chart without dependencies.
Also counted at the server: the index downloads and archive downloads of a cold review (one index
per repository and review, one download per archive).

    .venv/bin/python bench/dependencies_bench.py [--templates N] [--rounds N]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import helm_python

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from all_charts_bench import (  # noqa: E402
    PROFILES,
    RecordingRenderer,
    chart_files,
    git,
    write_files,
)

from bot.engine.review import Engine, ReviewInput  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from bot.render.cache import RenderCache  # noqa: E402
from bot.render.deps.fetcher import HelmFetcher  # noqa: E402
from bot.render.deps.store import DependencyStore  # noqa: E402
from bot.render.factory import make_renderer  # noqa: E402
from checks import REGISTRY  # noqa: E402

DEPENDENCIES = ("redis", "postgresql", "memcached")


class _Quiet(SimpleHTTPRequestHandler):
    paths: list[str] = []  # every path asked, in order: what a review cost the repository

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        pass

    def send_head(self):  # type: ignore[no-untyped-def] - the base's signature
        _Quiet.paths.append(self.path)
        return super().send_head()


def serve_repository(root: Path, templates: int) -> tuple[ThreadingHTTPServer, str]:
    """The three dependencies, packaged and indexed, served over HTTP on 127.0.0.1."""
    public = root / "public"
    public.mkdir()
    for name in DEPENDENCIES:
        source = root / "src" / name
        write_files(source, chart_files(name, templates))
        helm_python.chart.package(source, destination=public)
    helm_python.registry.repo_index_generate(public)
    handler = functools.partial(_Quiet, directory=str(public))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def build_repo(root: Path, url: str, templates: int) -> None:
    """charts/app with the three dependencies, charts/plain the same chart without them; the PR
    changes a value in both."""
    git(root, "init", "-q", "-b", "develop")
    deps = "".join(
        f"  - name: {n}\n    version: 1.0.0\n    repository: {url}\n" for n in DEPENDENCIES
    )
    for name in ("app", "plain"):
        files = chart_files(name, templates)
        if name == "app":
            files["Chart.yaml"] += f"dependencies:\n{deps}"
        write_files(root / "charts" / name, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "charts")
    git(root, "checkout", "-qb", "pr")
    for name in ("app", "plain"):
        values = root / "charts" / name / "values.yaml"
        values.write_text(values.read_text() + "extra: 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a value")
    git(root, "repack", "-adq")


def review(repo: GitRepo, renderer: RecordingRenderer, store: Path, chart: str) -> float:
    renderer.jobs.clear()
    engine = Engine(repo, renderer, REGISTRY, RenderCache(), HelmFetcher(DependencyStore(store)))
    t0 = time.perf_counter()
    report = engine.review(ReviewInput("develop", "pr", charts=(chart,))).report
    elapsed = time.perf_counter() - t0
    assert report.charts[0].not_reviewed is None, report.charts[0].not_reviewed
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--templates", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, url = serve_repository(Path(tmp), args.templates)
        root = Path(tmp) / "repo"
        root.mkdir()
        build_repo(root, url, args.templates)
        repo = GitRepo(root)
        renderer = RecordingRenderer(make_renderer("embedded"))
        review(repo, renderer, Path(tmp) / "warmup", "charts/plain")  # Helm loaded, processes up
        rows: dict[str, list[tuple[float, float]]] = {"cold": [], "warm": [], "no deps": []}
        asked: list[str] = []
        for round_ in range(args.rounds):
            store = Path(tmp) / f"store-{round_}"
            for case, chart in (("cold", "app"), ("warm", "app"), ("no deps", "plain")):
                _Quiet.paths.clear()
                seconds = review(repo, renderer, store, f"charts/{chart}")
                rows[case].append((seconds, renderer.replay_alone()))
                asked += _Quiet.paths if case == "cold" else []
        server.shutdown()
    print(
        f"charts/app: {len(DEPENDENCIES)} dependencies from a chart repository on 127.0.0.1, "
        f"{args.templates} templates each and in the chart, {len(PROFILES)} profiles, base and "
        f"head; medians of {args.rounds} rounds"
    )
    for case, pairs in rows.items():
        review_s = statistics.median(p[0] for p in pairs)
        raw_s = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[0] / p[1] for p in pairs)
        print(f"{case:8} review {review_s:6.3f} s  raw renders {raw_s:6.3f} s  ratio {ratio:5.2f}x")
    indexes = sum(p.endswith("/index.yaml") for p in asked) / args.rounds
    archives = sum(p.endswith(".tgz") for p in asked) / args.rounds
    print(f"cold review: {indexes:g} index downloads, {archives:g} archive downloads")
    print(f"(cpu count {os.cpu_count()}; target: warm within 1.5x, as 'no deps')")


if __name__ == "__main__":
    main()
