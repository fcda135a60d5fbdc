"""A cold review as people meet it: a fresh `chart-review review` process, against a fresh process
doing Helm's whole work for the same change (bench/helm_work.py), paired round by round.

Each round runs both, in alternating order (the machine's speed drifts over a run, and whichever
runs second finds the page cache warmer), and takes each one's wall clock and CPU: the user and
system time `wait4` gives for the process and every descendant it reaped (its render processes,
its git processes), so a process left unreaped is CPU left uncounted, and the CLI reaps them all.
Reported: the medians of each round's ratios, wall and CPU.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HELM_WORK = Path(__file__).resolve().parent / "helm_work.py"


@dataclass(frozen=True)
class Measured:
    wall: float
    cpu: float


def measured(
    command: Sequence[str],
    cwd: Path = ROOT,
    env: dict[str, str] | None = None,
    ok: tuple[int, ...] = (0, 1),
) -> Measured:
    """One process's wall clock and CPU (its own and its reaped descendants'). An exit in `ok`
    (a review's: 0, or 1 for its findings) is a run; any other stops the bench with the process's
    stderr."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env or _env()
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(command)}: exit {proc.returncode}\n{err.decode()[-3000:]}")
    return Measured(wall, usage.ru_utime + usage.ru_stime)


def _env() -> dict[str, str]:
    # No terminal: the CLI writes no progress line, as in a CI log.
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TERM")}


def review_command(repo: Path, base: str, head: str, output: Path) -> list[str]:
    """The CLI's review with its default options (open PRs discovered from the refs, lint and
    every check on); offline, as a mirror has no network."""
    return [
        sys.executable,
        "-m",
        "bot.cli",
        "review",
        "--repo",
        str(repo),
        "--base",
        base,
        "--head",
        head,
        "--offline",
        "--format",
        "json",
        "--output",
        str(output),
    ]


def helm_command(repo: Path, base: str, head: str, charts: Sequence[str]) -> list[str]:
    command = [sys.executable, str(HELM_WORK), "--repo", str(repo), "--base", base, "--head", head]
    for chart in charts:
        command += ["--chart", chart]
    return command


@dataclass(frozen=True)
class ColdRatios:
    charts: tuple[str, ...]
    reviews: tuple[Measured, ...]
    floors: tuple[Measured, ...]

    def ratio(self, what: str) -> float:
        pairs = zip(self.reviews, self.floors, strict=True)
        return statistics.median(getattr(r, what) / getattr(f, what) for r, f in pairs)

    def median(self, which: str, what: str) -> float:
        return statistics.median(getattr(m, what) for m in getattr(self, which))

    def line(self) -> str:
        return (
            f"cold CLI process {self.median('reviews', 'wall') * 1000:.0f} ms wall, "
            f"{self.median('reviews', 'cpu') * 1000:.0f} ms CPU; Helm's whole work alone "
            f"{self.median('floors', 'wall') * 1000:.0f} ms wall, "
            f"{self.median('floors', 'cpu') * 1000:.0f} ms CPU; ratio wall "
            f"{self.ratio('wall'):.2f}x, CPU {self.ratio('cpu'):.2f}x (target <= 1.50x; "
            f"rounds wall {_listed(self, 'wall')}; CPU {_listed(self, 'cpu')})"
        )


def _listed(ratios: ColdRatios, what: str) -> str:
    pairs = zip(ratios.reviews, ratios.floors, strict=True)
    return ", ".join(f"{getattr(r, what) / getattr(f, what):.2f}" for r, f in pairs)


def compiled() -> None:
    """The tree's bytecode, as an installed package has it (pip compiles at install): without it
    (an editable install where PYTHONDONTWRITEBYTECODE is set) every process compiles every
    module it imports, three times a review's imports."""
    for package in ("bot", "checks"):
        compileall.compile_dir(str(ROOT / package), quiet=1)


def cold_ratios(repo: Path, base: str, head: str, rounds: int) -> ColdRatios | None:
    """The paired rounds; None where the review renders no chart (nothing for Helm to do)."""
    compiled()
    with tempfile.TemporaryDirectory() as tmp:
        output = Path(tmp) / "report.json"
        review = review_command(repo, base, head, output)
        measured(review)  # once, for the charts it reviews (and the page cache, for both)
        charts = tuple(c["path"] for c in json.loads(output.read_text())["charts"])
        if not charts:
            return None
        helm = helm_command(repo, base, head, charts)
        measured(helm)
        reviews, floors = [], []
        for n in range(rounds):
            pair = (review, helm) if n % 2 == 0 else (helm, review)
            first, second = (measured(command) for command in pair)
            reviewed, floor = (first, second) if n % 2 == 0 else (second, first)
            reviews.append(reviewed)
            floors.append(floor)
        return ColdRatios(charts, tuple(reviews), tuple(floors))
