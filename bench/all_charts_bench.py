"""`--all-charts` over many generated charts: the review next to the renders it makes, and peak memory.

A repository of N charts (default 100), each a few Deployments and Services with 4 profiles; the
reviewed branch touches docs only, so base and head render alike and each (chart, profile) renders
once. Timed: (a) the engine's whole `--all-charts` review, cold, in the sandbox's render processes;
(b) the same renders alone, the archives and values the review handed the renderer, as many at once
as the engine renders. Reported: both, their ratio (target <= 1.5x), and the peak RSS of this
process and of its largest render process (`getrusage`). The peak grows with the number of charts
until the bounded caches (renders, parses, git objects) are full; `--held` reviews once more, traced,
and reports what the review holds past them: its report, and what its context keeps of each chart
(bot/engine/chart_windows.py lets a chart's renders go once its window is checked).

    .venv/bin/python bench/all_charts_bench.py [--charts N] [--templates N] [--held]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.charts.resources import Resources  # noqa: E402
from bot.engine.review import Engine, ReviewInput  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from bot.render.base import RENDER_WORKERS, Renderer  # noqa: E402
from bot.render.cache import RenderCache  # noqa: E402
from bot.render.factory import make_renderer  # noqa: E402
from bot.render.lint import Linted, lint_alone, render_and_lint  # noqa: E402
from bot.review_process import tune_for_reviews  # noqa: E402
from checks import REGISTRY  # noqa: E402

PROFILES = ("aks", "eks", "gke", "oc")
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: '{{{{ .Release.Name }}}}-{name}-{i}'}}
spec:
  replicas: {{{{ .Values.replicas }}}}
  selector: {{matchLabels: {{app: {name}-{i}}}}}
  template:
    metadata: {{labels: {{app: {name}-{i}}}}}
    spec:
      containers:
        - name: app
          image: "example/{name}:{{{{ .Values.tag }}}}"
          ports: [{{name: http, containerPort: 8080}}]
          readinessProbe: {{httpGet: {{path: /healthz, port: http}}}}
          resources: {{{{- toYaml .Values.resources | nindent 12 }}}}
"""
SERVICE = """apiVersion: v1
kind: Service
metadata: {{name: '{{{{ .Release.Name }}}}-{name}-{i}'}}
spec:
  selector: {{app: {name}-{i}}}
  ports: [{{port: 80, targetPort: http}}]
"""


def chart_files(name: str, templates: int, version: str = "1.0.0", edit: int = 0) -> dict[str, str]:
    """A chart's files (path under the chart → text). `edit` changes the replicas of one
    Deployment, so that a history can make a new tree of the chart at every change."""
    files = {
        "Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: {version}\n",
        "values.yaml": "replicas: 1\ntag: '1'\n"
        "resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {memory: 64Mi}}\n",
    }
    for i in range(templates // 2):
        text = DEPLOYMENT.format(name=name, i=i)
        if edit and i == edit % (templates // 2):
            text = text.replace("{{ .Values.replicas }}", str(edit + 1))
        files[f"templates/{name}-{i}-deployment.yaml"] = text
        files[f"templates/{name}-{i}-service.yaml"] = SERVICE.format(name=name, i=i)
    for n, profile in enumerate(PROFILES):
        files[f"ci/{profile}-values.yaml"] = f"replicas: {n + 1}\n"
    return files


def git(root: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(root),
    }
    return subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
    ).stdout.strip()


def write_files(root: Path, files: Mapping[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


ALONE = 2  # a job's kind: a lint alone, of a render made before (True: a render and its lint)


class RecordingRenderer:
    """The review's renderer, counting its renders and lints and keeping what each was handed, so
    that the same work can be timed alone afterwards: Helm's whole work, as `ct lint` would do it
    (a render, and `helm lint` where the review linted), nothing of the review's own."""

    def __init__(self, inner: Renderer) -> None:
        self.inner, self.version = inner, inner.version
        # (archive, values, release, namespace, extra, linted: False, True or ALONE)
        self.jobs: list[tuple[bytes, Mapping[str, Any], str, str, tuple[Any, ...], int]] = []
        self._lock = threading.Lock()

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str, *extra: Any
    ) -> dict[str, str]:
        with self._lock:
            self.jobs.append((archive, values, release, namespace, extra, False))
        return self.inner.render(archive, values, release, namespace, *extra)

    def render_linted(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str, *extra: Any
    ) -> Linted:
        with self._lock:
            self.jobs.append((archive, values, release, namespace, extra, True))
        return render_and_lint(self.inner, archive, values, release, namespace, *extra)

    def lint_alone(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str, *extra: Any
    ) -> Linted:
        with self._lock:
            self.jobs.append((archive, values, release, namespace, extra, ALONE))
        return lint_alone(self.inner, archive, values, release, namespace, *extra)  # type: ignore[arg-type]

    @property
    def lints(self) -> int:
        return sum(1 for job in self.jobs if job[-1])

    def replay_alone(self, lint: bool = True) -> float:
        """The recorded work again, nothing else, RENDER_WORKERS at once (as the engine); with
        `lint` False, the renders only."""
        t0 = time.perf_counter()
        with ThreadPoolExecutor(RENDER_WORKERS) as pool:
            jobs = [pool.submit(_replay_quietly, self.inner, job, lint) for job in self.jobs]
            for future in jobs:
                future.result()
        return time.perf_counter() - t0


def _replay_quietly(renderer: Renderer, job: tuple[Any, ...], lint: bool) -> None:
    archive, values, release, namespace, extra, linted = job
    with contextlib.suppress(Exception):  # a render that fails costs its time all the same
        if linted == ALONE:
            if lint:
                lint_alone(renderer, archive, values, release, namespace, *extra)  # type: ignore[arg-type]
        elif linted and lint:
            render_and_lint(renderer, archive, values, release, namespace, *extra)
        else:
            renderer.render(archive, values, release, namespace, *extra)


def peak_rss_mb() -> tuple[float, float, float]:
    """Peak RSS in MB: this process; its render processes, which live on (their high-water marks,
    `VmHWM`, summed); and children already ended (`getrusage`, the largest). Linux counts in KB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ended = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return own / 1024, sum(_high_water_kb(pid) for pid in _children()) / 1024, ended / 1024


def children_cpu() -> float:
    """The user and system time of this process's live children (the render processes), from
    /proc: a render process never ends, so getrusage does not count it."""
    return sum(_cpu_seconds(pid) for pid in _children())


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0  # ended since the listing
    return (int(fields[11]) + int(fields[12])) / _TICKS


_TICKS = os.sysconf("SC_CLK_TCK")


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        try:
            text = (task / "children").read_text()
        except OSError:
            continue  # a thread that ended since the listing (a pool's idle worker): none
        pids += [int(p) for p in text.split()]
    return pids


def _high_water_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((x for x in status.splitlines() if x.startswith("VmHWM:")), "VmHWM: 0 kB")
    return int(line.split()[1])


def build_repo(root: Path, charts: int, templates: int) -> None:
    git(root, "init", "-q", "-b", "develop")
    for c in range(charts):
        write_files(root / "charts" / f"c{c:03d}", chart_files(f"c{c:03d}", templates))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "charts")
    git(root, "checkout", "-qb", "pr")
    write_files(root, {"docs/README.md": "# Charts\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "docs")
    git(root, "repack", "-adq")


def main() -> None:
    tune_for_reviews()  # as the command line does: a review's process
    parser = argparse.ArgumentParser()
    parser.add_argument("--charts", type=int, default=100)
    parser.add_argument("--templates", type=int, default=10)
    parser.add_argument(
        "--held",
        action="store_true",
        help="review once more, traced, for what the review holds past its bounded caches",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build_repo(root, args.charts, args.templates)
        renderer = RecordingRenderer(make_renderer("embedded"))
        repo = GitRepo(root)
        # Warm, as a long-running worker is: the render processes started, Helm's library loaded.
        Engine(repo, renderer, REGISTRY).review(
            ReviewInput("develop", "pr", charts=("charts/c000",))
        )
        renderer.jobs.clear()
        engine = Engine(repo, renderer, REGISTRY, RenderCache())  # as the command line has it
        t0 = time.perf_counter()
        report = engine.review(ReviewInput(base="develop", head="pr", all_charts=True)).report
        review_s = time.perf_counter() - t0
        own_mb, live_mb, ended_mb = peak_rss_mb()
        raw_s = renderer.replay_alone()
        held = held_past_caches(root, renderer.inner) if args.held else None
    print(
        f"--all-charts: {len(report.charts)} charts x {len(PROFILES)} profiles, "
        f"{args.templates} templates each; {len(renderer.jobs)} renders (base and head alike), "
        f"{renderer.lints} linted"
    )
    print(
        f"whole review        {review_s:8.2f} s  (render {engine.timings.render:.2f} s, "
        f"checks {engine.timings.checks:.2f} s)"
    )
    print(
        f"Helm's work alone   {raw_s:8.2f} s  (those renders and lints, {RENDER_WORKERS} at once, "
        "as the engine)"
    )
    print(f"ratio review/raw    {review_s / raw_s:8.2f}x  (target <= 1.50x)")
    print(
        f"peak RSS            {own_mb:8.1f} MB this process; render processes {live_mb:.1f} MB "
        f"(summed), ended children {ended_mb:.1f} MB"
    )
    if held is not None:
        print(
            f"held past the caches {held[0]:8.1f} MB (the review's result, its bounded caches "
            f"emptied; the report alone {held[1]:.1f} MB)"
        )


def held_past_caches(root: Path, renderer: Renderer) -> tuple[float, float]:
    """What a cold `--all-charts` review holds once every bounded cache is emptied: its result
    (the report and the context), in MB, and the report alone. The peak RSS grows with the
    number of charts until the caches are full; this part is all that grows past them."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        resources = Resources()  # memos of its own, so cold, and emptied whole below
        engine = Engine(GitRepo(root), renderer, REGISTRY, RenderCache(), resources=resources)
        result: Any = engine.review(ReviewInput(base="develop", head="pr", all_charts=True))
        del engine
        resources.close()
        gc.collect()
        whole = tracemalloc.get_traced_memory()[0] - before
        report, result = result.report, None
        gc.collect()
        alone = tracemalloc.get_traced_memory()[0] - before
        del report
    finally:
        tracemalloc.stop()
    return whole / 1e6, alone / 1e6


if __name__ == "__main__":
    main()
