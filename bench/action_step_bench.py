"""The GitHub Action's whole step against the command line's review of the same PR, paired.

A real mirror's PR, published to the fake GitHub (tests/support/fakegithub, on 127.0.0.1) with the
mirror's other open PRs listed as GitHub would list them. Each round: a fresh job checkout (what
`actions/checkout` with `fetch-depth: 0` leaves: the base branch, cloned from the mirror; not
timed), then, timed, action.yml's steps as a runner runs them (tests/support/action_runner.py: the
install's key, the install found in the tool cache, the warm install, then the review step), and
the same venv's `chart-review review` of the PR on the mirror (open PRs discovered from the refs,
as a cold CLI). GitHub's pacing is off (GITHUB_SECONDS_BETWEEN_REQUESTS and _WRITES 0); what it
would have waited at its defaults (bot/app/settings.py), from the requests the fake served, is
reported apart.

    .venv/bin/python bench/action_step_bench.py --repo MIRROR --pr N [--base B] [--rounds N]
        [--tool-cache DIR]

`--tool-cache`: the runner's tool cache, kept between runs with the install action.yml makes there
(default: a new one, where the first run installs from a wheelhouse of this environment: the cold
install, never timed).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cold_bench import Measured, compiled, measured, review_command  # noqa: E402

from bot.cli.open_prs import discover_open_prs  # noqa: E402
from bot.git.repo import GitRepo  # noqa: E402
from tests.support.action_runner import ActionRun, Runner  # noqa: E402
from tests.support.app_harness import example  # noqa: E402
from tests.support.fakegithub import FakeGitHub  # noqa: E402
from tests.support.wheelhouse import build_wheelhouse  # noqa: E402

REPO = "acme/charts"
# GitHub's courtesy pacing at the App's defaults (bot/app/settings.py): between any two requests,
# and between two writes.
REQUEST_PACE, WRITE_PACE = 0.25, 1.0
WRITES = ("POST", "PATCH", "PUT", "DELETE")
REVIEW_STEP = "Review the pull request"
INPUTS = {"fail-on": "never", "comment": "true", "cache": "false"}


def run_action(runner: Runner, token: str) -> tuple[ActionRun, Measured]:
    """action.yml's steps, timed as one: wall clock and the CPU of every process they ran."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = runner.run({**INPUTS, "github-token": token})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    review = done.step(REVIEW_STEP)
    if review.code not in (0, 1):
        raise SystemExit(f"the action failed ({review.code}):\n{review.stderr[-3000:]}")
    return done, Measured(wall, cpu)


def event(number: int, head: str, base: str, base_ref: str) -> dict[str, Any]:
    payload = copy.deepcopy(example("pull_request.opened"))
    owner, name = REPO.split("/")
    payload["repository"].update(full_name=REPO, name=name)
    payload["repository"]["owner"]["login"] = owner
    payload.pop("installation", None)
    pr = payload["pull_request"]
    pr["number"] = payload["number"] = number
    pr["title"], pr["body"] = f"PR {number}", None
    pr["head"].update(sha=head, ref=f"pr-{number}")
    pr["base"].update(sha=base, ref=base_ref)
    pr["base"]["repo"].update(full_name=REPO, private=False)
    pr["head"]["repo"].update(full_name=REPO, fork=False)
    return payload


def publish_repo(github: FakeGitHub, mirror: Path, base_ref: str, number: int) -> dict[str, str]:
    """The mirror as acme/charts, PR `number` and the other open PRs discovery finds in it."""
    repo = GitRepo(mirror)
    try:
        base = repo.resolve(base_ref)
        head = repo.resolve(f"refs/pull/{number}/head")
        assert base is not None and head is not None, f"{mirror}: no {base_ref} or PR {number}"
        others = discover_open_prs(repo, base, None, head, exclude_number=number)
    finally:
        repo.close()
    github.add_repo(REPO, default_branch=base_ref, clone_url=str(mirror), branches={base_ref: base})
    for pr in (*others, None):
        pr_number, pr_head = (number, head) if pr is None else (pr.number, pr.head)
        if not pr_number:
            continue
        github.add_pull(
            REPO,
            number=pr_number,
            head_sha=pr_head,
            base_sha=base,
            head_ref=f"pr-{pr_number}",
            base_ref=base_ref,
        )
    return {"base": base, "head": head}


def runner_env(
    tmp: Path, github: FakeGitHub, payload: dict[str, Any], workspace: Path
) -> dict[str, str]:
    (tmp / "event.json").write_text(json.dumps(payload))
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {
        **kept,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp / "event.json"),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": github.issue_token(),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_SECONDS_BETWEEN_REQUESTS": "0",
        "GITHUB_SECONDS_BETWEEN_WRITES": "0",
        "GITHUB_RETRY_BACKOFF": "0.05",
    }


def checkout(mirror: Path, base_ref: str, into: Path) -> Path:
    """What actions/checkout with `fetch-depth: 0` leaves: the base branch (not timed)."""
    if into.exists():
        shutil.rmtree(into)
    clone = ["git", "clone", "-q", "--single-branch", "-b", base_ref, str(mirror), str(into)]
    subprocess.run(clone, check=True)
    return into


def pacing_waits(github: FakeGitHub) -> tuple[int, int, float]:
    """Requests and writes the fake served, and what GitHub's pacing would have waited at most."""
    with github.state.lock:
        methods = [r.method for r in github.state.requests]
    writes = sum(1 for m in methods if m in WRITES)
    waited = max(len(methods) - 1, 0) * REQUEST_PACE + max(writes - 1, 0) * (
        WRITE_PACE - REQUEST_PACE
    )
    return len(methods), writes, waited


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--pr", type=int, required=True)
    parser.add_argument("--base")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tool-cache", type=Path, help="RUNNER_TOOL_CACHE, kept between runs")
    args = parser.parse_args()
    compiled()
    base_ref = args.base or GitRepo(args.repo).default_branch() or "main"
    tmp = Path(tempfile.mkdtemp(prefix="action-step-bench-"))
    tool_cache = args.tool_cache or tmp / "hostedtoolcache"
    tool_cache.mkdir(parents=True, exist_ok=True)
    github = FakeGitHub().start()
    try:
        shas = publish_repo(github, args.repo, base_ref, args.pr)
        payload = event(args.pr, shas["head"], shas["base"], base_ref)
        rows: list[tuple[float, Measured, Measured, tuple[int, int, float]]] = []
        venv = ""
        for n in range(args.rounds + 2):  # the first installs (if needed), the second warms
            workspace = checkout(args.repo, base_ref, tmp / "workspace")
            env = runner_env(tmp, github, payload, workspace)
            env.update(RUNNER_TEMP=str(tmp / "runner"), RUNNER_TOOL_CACHE=str(tool_cache))
            if n == 0:
                env.update(cold_install_env(tmp))
            (tmp / "runner").mkdir(exist_ok=True)
            with github.state.lock:
                github.state.requests.clear()
            done, action = run_action(Runner(ROOT, env, tmp / "cache-service"), env["GITHUB_TOKEN"])
            paced = pacing_waits(github)
            venv = done.step("Find chart-review's install").outputs["venv"]
            cli = review_command(args.repo, base_ref, f"refs/pull/{args.pr}/head", tmp / "cli.json")
            cli[:3] = [str(Path(venv) / "bin" / "chart-review")]
            review = measured(cli)
            if n >= 2:
                install = sum(s.seconds for s in done.steps if s.name != REVIEW_STEP)
                rows.append((install, action, review, paced))
        report(rows)
    finally:
        github.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def cold_install_env(tmp: Path) -> dict[str, str]:
    """pip reaching only a wheelhouse repacked from this environment, for the first install."""
    wheels = build_wheelhouse(tmp / "wheelhouse")
    return {
        "PATH": f"{Path(sys.base_prefix) / 'bin'}:{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_CONFIG_FILE": os.devnull,
    }


def report(rows: list[tuple[float, Measured, Measured, tuple[int, int, float]]]) -> None:
    median = statistics.median
    step = [a.wall for _, a, _, _ in rows]
    step_cpu = [a.cpu for _, a, _, _ in rows]
    cli = [r.wall for _, _, r, _ in rows]
    cli_cpu = [r.cpu for _, _, r, _ in rows]
    requests, writes, waited = rows[-1][3]
    print(
        f"action step {median(step) * 1000:.0f} ms wall, {median(step_cpu) * 1000:.0f} ms CPU "
        f"(install steps {median([i for i, *_ in rows]) * 1000:.0f} ms); CLI review "
        f"{median(cli) * 1000:.0f} ms wall, {median(cli_cpu) * 1000:.0f} ms CPU; ratio wall "
        f"{median([s / c for s, c in zip(step, cli, strict=True)]):.2f}x, CPU "
        f"{median([s / c for s, c in zip(step_cpu, cli_cpu, strict=True)]):.2f}x (target <= 2x)"
    )
    print(
        f"pacing, apart: {requests} requests, {writes} writes; at GitHub's default pacing "
        f"({REQUEST_PACE} s between requests, {WRITE_PACE} s between writes) up to "
        f"{waited:.1f} s of waits more"
    )


if __name__ == "__main__":
    sys.exit(main())
