"""Scale-out for real: a redis-server, `serve --no-worker` and three `worker` processes, 60 signed
deliveries for 12 PRs. Every PR ends with its latest head reviewed once per check, with one summary
comment — also when a worker is SIGKILLed mid-review."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from tests.support.app_harness import pull_request_event, wait_for
from tests.support.app_scenario import RUNS
from tests.support.charts import chart_files
from tests.support.cluster import Cluster, app_env, cluster, json_lines
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder
from tests.support.redis_server import redis_server

REPO = "acme/fleet"
# Twice the job threads of the fleet (3 workers × WORKERS=2), each PR pushed to while it is being
# reviewed: enough for every race the assertions look for, at a fraction of the reviews.
PRS = 12
PUSHES = 5


@dataclass(frozen=True)
class Fleet:
    clone_url: str
    base: str
    heads: dict[int, list[str]]  # PR number → its heads, oldest first


@pytest.fixture(scope="module")
def fleet_repo(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The repository, built once: the App only reads it (its mirror is its own, under DATA_DIR)."""
    git = GitBuilder(tmp_path_factory.mktemp("fleet") / "fleet")
    for path, text in chart_files("client", "client", "1.0.0").items():
        git.write(path, text)
    base = git.commit("client 1.0.0").sha()
    heads: dict[int, list[str]] = {}
    for n in range(1, PRS + 1):
        git.branch(f"pr-{n}", "develop")
        git.write("client/Chart.yaml", f"apiVersion: v2\nname: client\nversion: 1.{n}.0\n")
        heads[n] = [
            git.write("client/NOTES.md", f"take {k}\n").commit(f"PR {n} take {k}").sha()
            for k in range(PUSHES)
        ]
        git.pull_ref(n, f"pr-{n}")
    git.checkout("develop")
    return Fleet(str(git.path), base, heads)


@pytest.fixture
def fleet(fleet_repo: Fleet, github: FakeGitHub) -> Fleet:
    """The repository and its PRs on this test's (freshly reset) fake GitHub."""
    github.add_repo(
        REPO,
        default_branch="develop",
        clone_url=fleet_repo.clone_url,
        branches={"develop": fleet_repo.base},
    )
    for n, heads in fleet_repo.heads.items():
        github.add_pull(
            REPO,
            number=n,
            head_sha=heads[0],
            base_sha=fleet_repo.base,
            head_ref=f"pr-{n}",
            base_ref="develop",
        )
    return fleet_repo


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture
def redis_cluster(tmp_path: Path, github: FakeGitHub, redis_url: str) -> Iterator[Cluster]:
    """Fresh processes on an emptied Redis: nothing (queue, claims, locks) carries over."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.close()
    env = app_env(github, tmp_path / "data", REDIS_URL=redis_url, WORKERS="2")
    with cluster(env, tmp_path / "logs", workers=3) as running:
        yield running


def _push_storm(running: Cluster, github: FakeGitHub, fleet: Fleet, kill_after: int | None) -> None:
    """Each PR moves through its heads; GitHub tells the App about each move."""
    sent = 0
    for k in range(PUSHES):
        for n, heads in fleet.heads.items():
            github.update_pull(github.state.pulls[(REPO, n)], head_sha=heads[k])
            action = "opened" if k == 0 else "synchronize"
            payload = pull_request_event(action, REPO, fleet.clone_url, n, heads[k])
            assert running.deliver("pull_request", payload, f"d-{n}-{k}").status_code == 202
            sent += 1
            if sent == kill_after:
                _kill_a_reviewing_worker(running)


def _kill_a_reviewing_worker(running: Cluster) -> None:
    """SIGKILL the first worker caught between "reviewing" and the end of that review."""

    def mid_review() -> bool:
        for i, proc in enumerate(running.workers):
            log = running.logs / f"worker-{i}.log"
            messages = [line.get("message", "") for line in json_lines(log)]
            started = [i for i, m in enumerate(messages) if m == "reviewing"]
            ended = [i for i, m in enumerate(messages) if m.startswith("review published")]
            if started and (not ended or started[-1] > ended[-1]):
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                return True
        return False

    wait_for(mid_review, timeout=60, what="a worker in the middle of a review")


def _settled(github: FakeGitHub, fleet: Fleet) -> bool:
    for n, heads in fleet.heads.items():
        runs = github.check_runs(REPO, heads[-1])
        if len(runs) < len(RUNS) or any(r.status != "completed" for r in runs):
            return False
        if not any(heads[-1][:12] in c.body for c in github.issue_comments(REPO, n)):
            return False
    return True


def _assert_each_pr_reviewed_once(github: FakeGitHub, fleet: Fleet) -> None:
    for n, heads in fleet.heads.items():
        runs = github.check_runs(REPO, heads[-1])
        assert sorted(r.name for r in runs) == sorted(RUNS), f"PR #{n}"
        assert len(github.issue_comments(REPO, n)) == 1, f"PR #{n}: one summary comment"
    stuck = [r for r in github.check_runs(REPO) if r.status != "completed"]
    assert stuck == [], "no run left in progress on any head"


def test_three_workers_review_every_latest_head_once(
    redis_cluster: Cluster, github: FakeGitHub, fleet: Fleet
) -> None:
    _push_storm(redis_cluster, github, fleet, kill_after=None)
    wait_for(lambda: _settled(github, fleet), timeout=240, what="every PR's latest head reviewed")
    _assert_each_pr_reviewed_once(github, fleet)


def test_a_worker_killed_mid_review_loses_nothing(
    redis_cluster: Cluster, github: FakeGitHub, fleet: Fleet
) -> None:
    _push_storm(redis_cluster, github, fleet, kill_after=PRS)
    wait_for(lambda: _settled(github, fleet), timeout=240, what="every PR's latest head reviewed")
    wait_for(
        lambda: not [r for r in github.check_runs(REPO) if r.status != "completed"],
        timeout=60,
        what="the dead worker's runs to be closed",
    )
    _assert_each_pr_reviewed_once(github, fleet)
    assert any(
        "its worker stopped mid-run" in line.get("message", "")
        for line in redis_cluster.worker_logs()
    ), "the killed worker's job was re-queued by another"
