"""`chart-review serve --no-worker` and `chart-review worker` as real processes sharing the SQLite
queue under DATA_DIR, configured only through the environment, as an operator runs them."""

from __future__ import annotations

from pathlib import Path

from tests.support.app_harness import SECRET, pull_request_event, wait_for
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.cluster import app_env, cluster, json_lines
from tests.support.fakegithub import FakeGitHub


def test_serve_receives_and_a_separate_worker_reviews(
    github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    env = app_env(github, tmp_path / "data")
    with cluster(env, tmp_path / "logs", workers=0) as running:
        payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
        assert running.deliver("pull_request", payload, "serve-1").status_code == 202
        assert github.check_runs(REPO) == []  # received and queued; nobody works here

        running.add_worker()

        def reviewed() -> bool:
            runs = github.check_runs(REPO, scenario.head)
            return len(runs) == len(RUNS) and all(r.status == "completed" for r in runs)

        wait_for(reviewed, timeout=60, what="the worker to review the queued PR")

    logs = "".join(p.read_text() for p in (tmp_path / "logs").glob("*.log"))
    assert github.app_private_key.splitlines()[1] not in logs
    assert SECRET not in logs
    worker = json_lines(tmp_path / "logs" / "worker-0.log")
    assert any(
        (line.get("delivery"), line.get("repo"), line.get("head"))
        == ("serve-1", REPO, scenario.head)
        for line in worker
    )
