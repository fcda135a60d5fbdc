"""How fast the receiver acknowledges deliveries under sustained load, and whether it loses any.

For each rate: a fresh `chart-review serve --no-worker` on SQLite (DATA_DIR in a temp dir) gets
signed `pull_request.synchronize` deliveries on loopback, open loop, at a fixed rate for a fixed
time: delivery i is due at start + i/rate and its latency runs from then, so a server that falls
behind shows as latency, not as a lower rate. Each delivery goes on a new connection, as GitHub's
do. After the send phase, `chart-review worker` processes drain the queue against the test suite's
fake GitHub: every PR there is already at another head, so each job costs one API call and logs
"skipped: head … is stale" with its delivery id. The workers start only after the send phase so
that they, and the fake GitHub in this process, take no CPU from the receiver being measured.

    .venv/bin/python bench/webhook_load.py [--rates 50,100,200] [--seconds 30] [--workers 2]

Goal: p99 acknowledge under 50 ms at 100/s, every accepted delivery processed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.app_harness import pull_request_event, sign, wait_for  # noqa: E402
from tests.support.cluster import app_env, cluster  # noqa: E402
from tests.support.fakegithub import FakeGitHub  # noqa: E402

REPO = "acme/load"
PRS = 50
STALE = "0" * 40  # every delivery names this head; every PR on the fake is elsewhere
CURRENT = "1" * 40
# GitHub waits 10 s for an answer before it counts a delivery as failed.
GITHUB_TIMEOUT = 10.0
DRAIN_TIMEOUT = 300.0
SKIPPED = "skipped: head "


@dataclass(frozen=True)
class Result:
    rate: int
    sent: int
    accepted: set[str]  # delivery ids answered 2xx
    errors: int
    latencies: list[float]  # seconds from due time to answer, for every answer
    processed: int


def prepare(github: FakeGitHub) -> None:
    github.reset()
    github.add_repo(REPO, default_branch="develop", branches={"develop": "2" * 40})
    for n in range(1, PRS + 1):
        github.add_pull(REPO, number=n, head_sha=CURRENT, base_sha="2" * 40, base_ref="develop")


def deliveries(rate: int, seconds: float) -> list[tuple[str, bytes, dict[str, str]]]:
    """Every request of one phase, built and signed before the clock starts."""
    out = []
    for i in range(int(rate * seconds)):
        number = i % PRS + 1
        delivery = f"load-{rate}-{i}"
        payload = pull_request_event("synchronize", REPO, "unused", number, STALE)
        # GitHub's bodies differ (timestamps, ids); the receiver drops a body it has queued.
        payload["pull_request"]["updated_at"] = delivery
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(body),
            "Content-Type": "application/json",
        }
        out.append((delivery, body, headers))
    return out


async def send_all(url: str, rate: int, seconds: float) -> tuple[set[str], int, list[float]]:
    requests = deliveries(rate, seconds)
    accepted: set[str] = set()
    latencies: list[float] = []
    errors = 0
    # No keep-alive: a new connection per delivery, as GitHub makes them.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=GITHUB_TIMEOUT) as client:

        async def send(due: float, delivery: str, body: bytes, headers: dict[str, str]) -> None:
            nonlocal errors
            try:
                response = await client.post("/webhook", content=body, headers=headers)
            except httpx.HTTPError:
                errors += 1
                return
            latencies.append(time.perf_counter() - due)
            if 200 <= response.status_code < 300:
                accepted.add(delivery)
            else:
                errors += 1

        start = time.perf_counter() + 0.1
        tasks = []
        for i, (delivery, body, headers) in enumerate(requests):
            due = start + i / rate
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            tasks.append(asyncio.create_task(send(due, delivery, body, headers)))
        await asyncio.gather(*tasks)
    return accepted, errors, latencies


class Processed:
    """Delivery ids the workers logged as handled, read incrementally from their JSON logs (only
    whole lines: a worker may be midway through writing the last one)."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.offsets: dict[Path, int] = {}
        self.seen: set[str] = set()

    def count(self, accepted: set[str]) -> int:
        for path in self.logs.glob("worker-*.log"):
            with path.open("rb") as log:
                log.seek(self.offsets.get(path, 0))
                data = log.read()
            whole = data[: data.rfind(b"\n") + 1]
            self.offsets[path] = self.offsets.get(path, 0) + len(whole)
            for raw in whole.splitlines():
                line = json.loads(raw) if raw.startswith(b"{") else {}
                if str(line.get("message", "")).startswith(SKIPPED):
                    self.seen.add(str(line.get("delivery")))
        return len(self.seen & accepted)


def run_phase(github: FakeGitHub, root: Path, rate: int, seconds: float, workers: int) -> Result:
    prepare(github)
    env = app_env(github, root / "data", WORKERS="4")
    with cluster(env, root / "logs", workers=0) as running:
        accepted, errors, latencies = asyncio.run(send_all(running.url, rate, seconds))
        for _ in range(workers):
            running.add_worker()
        done = Processed(running.logs)
        try:
            wait_for(
                lambda: done.count(accepted) == len(accepted),
                timeout=DRAIN_TIMEOUT,
                what="the workers to process every accepted delivery",
            )
        except AssertionError as exc:
            print(f"  {rate}/s: {exc}", file=sys.stderr)
    return Result(rate, int(rate * seconds), accepted, errors, latencies, done.count(accepted))


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="50,100,200", help="deliveries per second, comma list")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the drain")
    args = parser.parse_args()
    results = []
    with FakeGitHub() as github, tempfile.TemporaryDirectory() as tmp:
        for rate in (int(r) for r in args.rates.split(",")):
            results.append(
                run_phase(github, Path(tmp) / f"r{rate}", rate, args.seconds, args.workers)
            )
    print(f"{args.seconds:g} s per rate; latency from each delivery's due time to its answer")
    print(
        f"{'rate':>5} | {'sent':>5} | {'2xx':>5} | {'errors':>6} | {'p50 ms':>7} | {'p99 ms':>7} | processed"
    )
    for r in results:
        p50, p99 = (percentile(r.latencies, q) * 1000 for q in (50, 99))
        print(
            f"{r.rate:>5} | {r.sent:>5} | {len(r.accepted):>5} | {r.errors:>6} | "
            f"{p50:>7.1f} | {p99:>7.1f} | {r.processed}/{len(r.accepted)}"
        )


if __name__ == "__main__":
    main()
