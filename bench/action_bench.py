"""The Action's costs a workflow sees, measured in one run: its install, cold and warm, and its
publishing, in API requests and seconds, for one typical PR (the App tests' repository: one chart,
a QoS downgrade among a few findings).

Install: action.yml's steps run as a runner runs them (tests/support/action_runner.py), pip reaching
only a wheelhouse repacked from this environment (tests/support/wheelhouse.py), a job on a fresh
machine each time with the cache service shared: the first installs and saves, the second restores.
Reported per job: the install steps' seconds (key, restore, install, save) and the review step's.

Publishing: the Action run against the fake GitHub with GitHub's pacing left at its default (PyGithub
spaces requests 0.25 s, writes 1 s: what GitHub's secondary limits ask), on the first review of the
PR and on a re-run, in each layout. Publishing time is the span of the run's requests less the
review between the last request that begins the runs and the first that completes one.
`--code DIR` runs the Action's entry point from another checkout of the project (an older commit:
the numbers before a change), with this one's fake GitHub.

    .venv/bin/python bench/action_bench.py [--case install|publish|both] [--code DIR]
        [--layout default|per-check]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.action_job import as_actions, runner_env  # noqa: E402
from tests.support.action_runner import Runner  # noqa: E402
from tests.support.app_scenario import PER_CHECK_CONFIG, build_scenario  # noqa: E402
from tests.support.fakegithub import FakeGitHub  # noqa: E402
from tests.support.fakegithub.state import RequestRecord  # noqa: E402
from tests.support.wheelhouse import build_wheelhouse  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ACTION_FILES = ("action.yml", "pyproject.toml", "README.md", "bot", "checks", "webhooks")
INSTALL_STEPS = (
    "Find chart-review's install",
    "Restore chart-review's install",
    "Install chart-review",
    "Keep chart-review's install",
)
REVIEW_STEP = "Review the pull request"
DEFAULT_PACING = {"GITHUB_SECONDS_BETWEEN_REQUESTS": "", "GITHUB_SECONDS_BETWEEN_WRITES": ""}


def _action_copy(into: Path) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "--", *ACTION_FILES],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name in listed:
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)
    return into


def install_case(work: Path) -> None:
    started = time.perf_counter()
    wheels = build_wheelhouse(work / "wheelhouse")
    print(
        f"wheelhouse: {len(list(wheels.iterdir()))} wheels in {time.perf_counter() - started:.1f} s"
    )
    action = _action_copy(work / "action")
    machine = work / "hostedtoolcache"
    with FakeGitHub() as github:
        scenario = build_scenario(work / "repo", github)
        as_actions(github)
        for job in ("cold", "warm"):
            shutil.rmtree(machine, ignore_errors=True)
            machine.mkdir(parents=True)
            env = runner_env(work / job, github, scenario)
            env.update(
                RUNNER_TOOL_CACHE=str(machine),
                PATH=f"{Path(sys.base_prefix) / 'bin'}:{env['PATH']}",
                PIP_NO_INDEX="1",
                PIP_FIND_LINKS=str(wheels),
                PIP_CONFIG_FILE=os.devnull,
            )
            env.pop("VIRTUAL_ENV", None)
            done = Runner(action, env, work / "cache-service").run(
                {"github-token": env["GITHUB_TOKEN"]}
            )
            install = sum(done.step(name).seconds for name in INSTALL_STEPS)
            parts = ", ".join(
                f"{name.split()[0].lower()} {done.step(name).seconds:.1f}" for name in INSTALL_STEPS
            )
            review = done.step(REVIEW_STEP)
            print(
                f"{job}: install {install:.1f} s ({parts}); review step {review.seconds:.1f} s "
                f"(exit {review.code}); installed={done.step('Install chart-review').outputs}"
            )


def publish_seconds(calls: list[RequestRecord]) -> float:
    """The requests' span less the review: from the request before the first that completes a
    run (a PATCH of a run that does not set it in progress) to that one."""
    completing = next(
        i
        for i, c in enumerate(calls)
        if c.method == "PATCH"
        and "/check-runs/" in c.path
        and (c.json or {}).get("status") != "in_progress"
    )
    review = calls[completing].at - calls[completing - 1].at
    return calls[-1].at - calls[0].at - review


def _action(env: dict[str, str], code: Path) -> int:
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "action"],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"the action failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc.returncode


LAYOUTS = {"default": None, "per-check": PER_CHECK_CONFIG}  # the config at base, by name


def publish_case(work: Path, code: Path, layouts: list[str]) -> None:
    for layout in layouts:
        config = LAYOUTS[layout]
        with FakeGitHub() as github:
            scenario = build_scenario(work / f"repo-{layout}", github, config=config)
            as_actions(github)
            for run in ("first", "re-run"):
                before = len(github.calls())
                env = runner_env(work / f"{layout}-{run}", github, scenario, **DEFAULT_PACING)
                env["PYTHONPATH"] = str(code)
                started = time.perf_counter()
                status = _action(env, code)
                total = time.perf_counter() - started
                calls = github.calls()[before:]
                writes = sum(c.method != "GET" for c in calls)
                findings = len(
                    json.loads(Path(env["RUNNER_TEMP"], "chart-review-report.json").read_text())[
                        "findings"
                    ]
                )
                print(
                    f"{layout:9} {run:6}: {len(calls):2} requests ({writes} writes), publishing "
                    f"{publish_seconds(calls):5.2f} s of {total:5.2f} s; {findings} findings, exit {status}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=("install", "publish", "both"), default="both")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose Action runs")
    parser.add_argument(
        "--layout",
        action="append",
        choices=list(LAYOUTS),
        help="no config (the code's default layout) or `check_runs: per-check` (default: both)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="action-bench-") as tmp:
        work = Path(tmp)
        if args.case in ("publish", "both"):
            publish_case(work / "publish", args.code.resolve(), args.layout or list(LAYOUTS))
        if args.case in ("install", "both"):
            install_case(work / "install")


if __name__ == "__main__":
    main()
