"""How the App scales with worker processes, as ratios to one worker, measured in one run.

For 1, 2 and 4 `chart-review worker` processes (one thread each) beside `chart-review serve
--no-worker` on a local redis-server, against the test suite's fake GitHub on loopback: send one
signed `pull_request.opened` delivery for each of N PRs, and time
(a) how fast the receiver acknowledges them (deliveries per second, sent by 8 concurrent clients);
(b) how fast the workers complete the reviews (reviews per second, until every PR's check runs
    are completed).

    .venv/bin/python bench/workers_bench.py [--prs N] [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.app_harness import pull_request_event, wait_for  # noqa: E402
from tests.support.app_scenario import RUNS  # noqa: E402
from tests.support.charts import chart_files  # noqa: E402
from tests.support.cluster import app_env, cluster  # noqa: E402
from tests.support.fakegithub import FakeGitHub  # noqa: E402
from tests.support.gitbuilder import GitBuilder  # noqa: E402
from tests.support.redis_server import redis_server  # noqa: E402

REPO = "acme/bench"


def build_repo(root: Path, github: FakeGitHub, prs: int) -> dict[int, str]:
    git = GitBuilder(root / "repo")
    for path, text in chart_files("client", "client", "1.0.0").items():
        git.write(path, text)
    base = git.commit("client 1.0.0").sha()
    heads = {}
    for n in range(1, prs + 1):
        git.branch(f"pr-{n}", "develop")
        git.write("client/Chart.yaml", f"apiVersion: v2\nname: client\nversion: 1.{n}.0\n")
        git.write("client/values.yaml", f"# PR {n}\n" + chart_files()["app/values.yaml"])
        heads[n] = git.commit(f"PR {n}").sha()
        git.pull_ref(n, f"pr-{n}")
    git.checkout("develop")
    github.add_repo(
        REPO, default_branch="develop", clone_url=str(git.path), branches={"develop": base}
    )
    for n, head in heads.items():
        github.add_pull(
            REPO, number=n, head_sha=head, base_sha=base, head_ref=f"pr-{n}", base_ref="develop"
        )
    return heads


def measure(github: FakeGitHub, workers: int, prs: int, root: Path) -> tuple[float, float]:
    github.reset()
    heads = build_repo(root, github, prs)
    clone_url = str(root / "repo")
    with redis_server(root / "redis") as url:
        env = app_env(github, root / "data", REDIS_URL=url, WORKERS="1", LOG_LEVEL="WARNING")
        with cluster(env, root / "logs", workers=workers) as running:
            payloads = [
                (n, pull_request_event("opened", REPO, clone_url, n, head))
                for n, head in heads.items()
            ]
            started = time.perf_counter()
            with ThreadPoolExecutor(8) as pool:
                codes = list(
                    pool.map(lambda p: running.deliver("pull_request", p[1], f"b-{p[0]}"), payloads)
                )
            acked = time.perf_counter() - started
            assert all(r.status_code == 202 for r in codes)

            def done() -> bool:
                return all(
                    len(runs := github.check_runs(REPO, h)) == len(RUNS)
                    and all(r.status == "completed" for r in runs)
                    for h in heads.values()
                )

            wait_for(done, timeout=600, what="every review")
            reviewed = time.perf_counter() - started
    return prs / acked, prs / reviewed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=40)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    results: dict[int, tuple[float, float]] = {}
    with FakeGitHub() as github, tempfile.TemporaryDirectory() as tmp:
        for workers in counts:
            results[workers] = measure(github, workers, args.prs, Path(tmp) / f"w{workers}")
    base_ack, base_rev = results[counts[0]]
    print(f"{args.prs} PRs, one delivery each; ratios to {counts[0]} worker(s), same run")
    print("workers  deliveries/s  ratio  reviews/s  ratio")
    for workers, (ack, rev) in results.items():
        print(
            f"{workers:7d}  {ack:12.1f}  {ack / base_ack:5.2f}  {rev:9.2f}  {rev / base_rev:5.2f}"
        )


if __name__ == "__main__":
    main()
