"""What value provenance costs a review (issue 40), in renders and time, measured in one run.

A chart of N services (a Deployment each, resources and probe port from values) with 3 profiles;
the PR empties K services' resources in values.yaml and names a wrong probe port for one: values-
driven failures on every profile. Each round reviews it cold (every cache empty) twice, with
provenance and without (the engine's `attribute_values` left out), and redoes alone Helm's whole
work for the review without it (its renders and lints), as the review benchmark's floor.

Three ways: without provenance (as before issue 40), with it but no values edit suggested (its own
cost: the marked renders), and whole (each values edit proven by a render of its own, as every
suggestion is, within the suggestions' 10 renders). Reported for each: the renders asked of Helm
(the marked ones at most one per profile with a values-driven finding, the design's bound), the
findings placed on values lines, and the medians of the rounds' ratios: the review against
without provenance, and against Helm's whole work for it (every render and lint it asked for,
redone alone: the cold-start budget of 1.5x that provenance counts inside).

    .venv/bin/python bench/provenance_bench.py [--rounds N] [--services N] [--emptied K]
        [--in-process]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from all_charts_bench import RecordingRenderer  # noqa: E402

import bot.engine.chart_windows as chart_windows  # noqa: E402
from bot.charts.resources import Resources  # noqa: E402
from bot.engine.provenance import profiles_of  # noqa: E402
from bot.engine.review import Engine, ReviewInput  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from bot.model.check import Registry  # noqa: E402
from bot.model.report import Finding  # noqa: E402
from bot.render.base import Renderer  # noqa: E402
from bot.render.cache import RenderCache  # noqa: E402
from bot.render.embedded import EmbeddedHelm  # noqa: E402
from bot.render.factory import make_renderer  # noqa: E402
from bot.review_process import tune_for_reviews  # noqa: E402
from checks import REGISTRY  # noqa: E402
from tests.support.gitbuilder import GitBuilder  # noqa: E402

PROFILES = ("aks", "eks", "gke")
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ .Release.Name }}}}-svc{i}
spec:
  selector:
    matchLabels: {{app: svc{i}}}
  template:
    metadata:
      labels: {{app: svc{i}}}
    spec:
      containers:
        - name: svc{i}
          image: "example/svc{i}:{{{{ .Values.tag }}}}"
          ports: [{{name: http, containerPort: 8080}}]
          readinessProbe:
            httpGet:
              path: /healthz
              port: {{{{ .Values.svc{i}.port }}}}
          resources:
            {{{{- toYaml .Values.svc{i}.resources | nindent 12 }}}}
"""
SERVICE = """  port: http
  resources:
    requests: {{cpu: 100m, memory: 128Mi}}
    limits: {{cpu: 100m, memory: 128Mi}}
"""


def build(root: Path, services: int, emptied: int) -> GitBuilder:
    g = GitBuilder(root)
    g.write("app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.0\n")
    for i in range(services):
        g.write(f"app/templates/svc{i}.yaml", DEPLOYMENT.format(i=i))
    for n, profile in enumerate(PROFILES):
        g.write(f"app/ci/{profile}-values.yaml", f"tag: '1.{n}'\n")
    g.write("app/values.yaml", values(services, 0, False))
    g.commit("base").branch("pr")
    g.write("app/values.yaml", values(services, emptied, True))
    return g.commit("the pull request")


def values(services: int, emptied: int, wrong_port: bool) -> str:
    out = ["tag: '1'"]
    for i in range(services):
        block = SERVICE.format()
        if i < emptied:
            block = "  port: http\n  resources: {}\n"
        if wrong_port and i == services - 1:
            block = block.replace("port: http", "port: web")
        out.append(f"svc{i}:\n{block.rstrip()}")
    return "\n".join(out) + "\n"


def review(repo: GitRepo, helm: Renderer, way: str) -> tuple[float, list[Finding]]:
    """One cold review, `way` one of WAYS: on resources of its own, so with memos of its own."""
    registry = REGISTRY if way != "marks only" else NO_VALUES_FIX
    with Resources() as resources:
        run = Engine(repo, helm, registry, RenderCache(), resources=resources).review
        t0 = time.perf_counter()
        if way == "without":
            report = without_provenance(lambda: run(ReviewInput("develop", "pr"))).report
        else:
            report = run(ReviewInput("develop", "pr")).report
        took = time.perf_counter() - t0
    return took, list(report.findings)


WAYS = ("without", "marks only", "whole")
# The checks as they are, but proposing no values edit: provenance's own cost.
NO_VALUES_FIX = Registry(tuple(replace(c, values_fix=None) for c in REGISTRY))


def without_provenance(run: Callable[[], Any]) -> Any:
    """`run` with the engine placing no finding on a values line (and so making no marked render)."""
    kept = chart_windows.attribute_values
    chart_windows.attribute_values = lambda found, *rest: list(found)  # type: ignore[assignment]
    try:
        return run()
    finally:
        chart_windows.attribute_values = kept


def marked_renders(recorder: RecordingRenderer) -> int:
    return sum(1 for job in recorder.jobs if "crbmark" in str(job[1]))


def placed(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.origin is not None and f.origin.values is not None]


def main() -> None:
    tune_for_reviews()
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--services", type=int, default=20)
    parser.add_argument("--emptied", type=int, default=5)
    parser.add_argument("--in-process", action="store_true", help="render without the sandbox")
    args = parser.parse_args()
    helm: Renderer = EmbeddedHelm() if args.in_process else make_renderer("embedded")
    with tempfile.TemporaryDirectory() as tmp:
        repo = GitRepo(build(Path(tmp) / "repo", args.services, args.emptied).path)
        print(
            f"chart: {args.services} services, {len(PROFILES)} profiles; the PR empties "
            f"{args.emptied} services' resources and names a wrong probe port for one"
        )
        recorders = {way: RecordingRenderer(helm) for way in WAYS}
        for way, recorder in recorders.items():
            _, found = review(repo, recorder, way)
            on_values = placed(found)
            loud = [f for f in found if f.severity != "notice"]
            profiles = {p for f in on_values for p in profiles_of(f)}
            print(
                f"{way}: {len(recorder.jobs)} renders asked of Helm ({marked_renders(recorder)} "
                f"marked, {recorder.lints} linted); {len(on_values)} of {len(loud)} failures and "
                f"warnings on a values line, on {len(profiles)} profiles"
            )
        times: dict[str, list[float]] = {way: [] for way in WAYS}
        floors: dict[str, list[float]] = {way: [] for way in WAYS}
        for _ in range(args.rounds):
            for way in WAYS:
                times[way].append(review(repo, helm, way)[0])
                floors[way].append(recorders[way].replay_alone())
        for way in WAYS:
            against = [t / w for t, w in zip(times[way], times["without"], strict=True)]
            budget = [t / f for t, f in zip(times[way], floors[way], strict=True)]
            print(
                f"{way}: review / without provenance, median {statistics.median(against):.2f}; "
                f"review / Helm's whole work for it, median {statistics.median(budget):.2f} "
                f"({', '.join(f'{r:.2f}' for r in budget)}; target <= 1.5)"
            )


if __name__ == "__main__":
    main()
