"""Helm's whole work for one change, as a minimal program: the floor a cold review is held to.

For each chart given: both sides extracted (`git archive` of the chart directory at the merge base
and at the head, unpacked), every profile rendered on both sides and its manifests parsed, and every
head profile linted, as `ct lint` lints each values file. A profile is chart-testing's: each
`ci/*-values.yaml`, else the chart's defaults alone. Renders and lints go RENDER_WORKERS at once
(threads: the SDK's calls leave the GIL), as the review runs them; Helm is loaded in this process.
Nothing else: no check, no other open PR, no report.

    .venv/bin/python bench/helm_work.py --repo PATH --base REF --head REF --chart DIR [--chart DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import helm_python
import yaml

RENDER_WORKERS = 2  # as bot/render/base.py's on this machine's two cores
# What the review renders with (its defaults).
RELEASE, NAMESPACE = "release", "default"
NOT_MANIFESTS = ("NOTES.txt", ".tpl")  # what Helm renders that no object comes from


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout


def extract(repo: str, commit: str, chart: str, into: Path) -> Path | None:
    """The chart directory at `commit`, unpacked under `into`; None where it does not exist."""
    if not git(repo, "ls-tree", commit, "--", chart).strip():
        return None
    archive = git(repo, "archive", "--format=tar", commit, "--", chart)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / chart


def profiles(chart_dir: Path) -> dict[str, dict[str, Any]]:
    """chart-testing's profiles: each `ci/*-values.yaml`, else the defaults alone."""
    files = sorted(chart_dir.glob("ci/*-values.yaml"))
    if not files:
        return {"default": {}}
    return {
        f.name.removesuffix("-values.yaml"): yaml.load(f.read_text(), yaml.CSafeLoader) or {}
        for f in files
    }


def render(chart_dir: Path, values: dict[str, Any]) -> int:
    """One profile rendered and parsed: the number of documents."""
    try:
        with helm_python.Chart.load(chart_dir) as chart:
            manifests = chart.render(
                values=values, name=RELEASE, namespace=NAMESPACE, is_install=True
            )
    except helm_python.HelmError:
        return 0  # a failed render costs its time all the same
    return sum(parse(text) for name, text in manifests.items() if not name.endswith(NOT_MANIFESTS))


def parse(text: str) -> int:
    try:
        return sum(1 for doc in yaml.load_all(text, yaml.CSafeLoader) if doc)
    except yaml.YAMLError:
        return 0


def lint(chart_dir: Path, values: dict[str, Any]) -> int:
    report = helm_python.chart.lint(chart_dir, values, namespace=NAMESPACE)
    return len(report.get("messages") or ())


def extracted(repo: str, base: str, head: str, charts: list[str], into: Path) -> list[Path]:
    """Both sides of each chart, unpacked under `into`: (merge base, head) pairs, in order."""
    merge_base = git(repo, "merge-base", base, head).decode().strip()
    found = []
    for n, chart in enumerate(charts):
        for side, commit in (("base", merge_base), ("head", head)):
            chart_dir = extract(repo, commit, chart, into / f"{n}-{side}")
            if chart_dir is not None:
                found.append(chart_dir)
    return found


def work(sides: list[Path], pool: ThreadPoolExecutor) -> int:
    """Every profile of every side rendered and parsed, every head side's profiles linted."""
    jobs: list[Future[int]] = []
    for chart_dir in sides:
        for values in profiles(chart_dir).values():
            jobs.append(pool.submit(render, chart_dir, values))
            if chart_dir.parent.name.endswith("-head"):
                jobs.append(pool.submit(lint, chart_dir, values))
    return sum(job.result() for job in jobs)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--head", required=True)
    parser.add_argument("--chart", action="append", required=True)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(RENDER_WORKERS) as pool:
        sides = extracted(args.repo, args.base, args.head, args.chart, Path(tmp))
        done = work(sides, pool)
    print(f"{len(sides)} sides, {done} documents and lint messages")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
