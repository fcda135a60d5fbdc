"""YAML aliases cannot exhaust the reviewing process, through the App: a PR whose values file is a
billion laughs is a render failure naming the file, and the webhook receiver, in the same process
as the worker, answers as it does during any review."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.engine.test_yaml_bounded import laughs
from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.app_scenario import REPO, Scenario
from tests.support.check_runs import Family, family
from tests.support.fakegithub import FakeGitHub

PINGS = 40
STALL = 2.0  # seconds: far above any scheduling delay, far below what an expansion costs
VALUES = "client/ci/equal-values.yaml"


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def ping(app: RunningApp, stop: threading.Event, out: list[float]) -> None:
    with httpx.Client(timeout=30) as client:
        for _ in range(PINGS * 10):  # bounded, whatever happens to the review
            if stop.is_set() and len(out) >= PINGS:
                return
            started = time.perf_counter()
            assert client.get(f"{app.url}/healthz").status_code == 200
            out.append(time.perf_counter() - started)
            time.sleep(0.01)


def review_while_pinging(
    app: RunningApp, github: FakeGitHub, s: Scenario, values: str, run: str
) -> tuple[Family, list[float]]:
    """Push `values` to PR #1, and ping the receiver until `run` is completed: the run, and the
    receiver's latencies meanwhile."""
    head = s.git.checkout("wait-for-mysql").write(VALUES, values).commit("values").sha()
    s.git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)
    latencies: list[float] = []
    stop = threading.Event()
    pinger = threading.Thread(target=ping, args=(app, stop, latencies), daemon=True)
    pinger.start()
    payload = pull_request_event("synchronize", REPO, s.clone_url, 1, head)
    assert app.deliver("pull_request", payload).status_code == 202

    def completed() -> Family | None:
        runs = github.check_runs(REPO, head)
        done = runs and all(r.status == "completed" for r in runs)
        return family(runs, run) if done else None

    wait_for(lambda: completed() is not None, what=f"{run} completed")
    stop.set()
    pinger.join(timeout=60)
    found = completed()
    assert found is not None
    return found, latencies


def test_a_values_bomb_is_a_finding_and_the_receiver_keeps_answering(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    render, latencies = review_while_pinging(app, github, scenario, laughs(), "render")
    assert render.conclusion == "failure"
    assert f"{VALUES} line 7: not valid YAML: its aliases expand" in (render.summary or "")
    # Expanded, the bomb held the GIL for 26 s, and every ping waited for it. Refused, no ping
    # waits for more than what the machine's own load costs (the receiver's p99 during this
    # review, measured quietly: 34-58 ms, the same as during any warm review in the process;
    # a bound on that here would only measure the other tests running beside it).
    p99 = statistics.quantiles(latencies, n=100)[98]
    assert max(latencies) < STALL, f"a ping waited {max(latencies):.1f} s (p99 {p99 * 1000:.0f} ms)"
