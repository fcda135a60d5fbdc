"""action.yml run as a runner runs it (tests/support/action_runner.py): its steps in bash, its
expressions evaluated, pip installing from a wheelhouse repacked from this environment (no index:
PyPI is never asked), the cache service a directory keyed as the workflow keys it. A cold job
installs and saves the install; the next job, on a fresh machine, restores it and runs no pip at
all; both review the PR against the fake GitHub. How long each takes is bench/action_bench.py's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.report.schema import report_schema
from tests.support.action_job import as_actions, runner_env
from tests.support.action_runner import ActionRun, Runner, evaluate, expressions
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.fakegithub import FakeGitHub
from tests.support.report_schema import validated
from tests.support.wheelhouse import WheelhouseError, build_wheelhouse

ROOT = Path(__file__).resolve().parents[2]
ACTION_YML = ROOT / "action.yml"
# What a runner downloads of the action at its ref: the files git has (the work tree's, so that
# the test runs the code under test), not the checkout's caches and build leftovers.
ACTION_FILES = ("action.yml", "pyproject.toml", "README.md", "bot", "checks", "webhooks")
# The report's schema as the installed package reads it: package data, or a wheel without it.
SHIPPED_SCHEMA = (
    "import json, bot.report.schema as s\n"
    "print(json.dumps({'module': s.__file__, 'schema': s.report_schema()}))\n"
)


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        return build_wheelhouse(tmp_path_factory.mktemp("wheelhouse"))
    except WheelhouseError as exc:
        pytest.skip(f"no wheelhouse for the Action's install without an index: {exc}")


@pytest.fixture(scope="session")
def action_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "--", *ACTION_FILES],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    target = tmp_path_factory.mktemp("actions") / "chart-review-bot"
    for name in listed:
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[Path]:
    """Where a hosted runner's tool cache is: the same path on every job's new machine."""
    yield tmp_path / "hostedtoolcache"


def test_every_expression_of_action_yml_is_one_the_runner_here_evaluates() -> None:
    contexts = {"inputs": {}, "github": {}, "runner": {}, "steps": {}}
    found = expressions(ACTION_YML)
    assert found
    for text in found:
        evaluate(text, contexts)  # raises on anything it does not understand


def _job(
    tmp_path: Path,
    github: FakeGitHub,
    s: Scenario,
    action_dir: Path,
    wheelhouse: Path,
    machine: Path,
) -> ActionRun:
    """One job on a new machine: an empty tool cache and temporary directory, the cache service
    shared with the jobs before it; pip can reach only the wheelhouse."""
    shutil.rmtree(machine, ignore_errors=True)
    machine.mkdir(parents=True)
    env = runner_env(tmp_path, github, s)
    env.update(
        RUNNER_TOOL_CACHE=str(machine),
        PATH=f"{Path(sys.base_prefix) / 'bin'}:{env['PATH']}",  # setup-python's python3
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheelhouse),
        PIP_CONFIG_FILE="/dev/null",
        PIP_LOG=str(tmp_path / "pip.log"),  # pip appends here whenever it runs
    )
    env.pop("VIRTUAL_ENV", None)
    store = tmp_path.parent / "cache-service"
    return Runner(action_dir, env, store).run({"github-token": env["GITHUB_TOKEN"]})


def test_a_cold_job_installs_and_saves_and_a_warm_job_restores_and_runs_no_pip(
    tmp_path: Path,
    github: FakeGitHub,
    scenario: Scenario,
    action_dir: Path,
    wheelhouse: Path,
    machine: Path,
) -> None:
    as_actions(github)
    cold = _job(tmp_path / "cold", github, scenario, action_dir, wheelhouse, machine)
    key = cold.step("Find chart-review's install").outputs["key"]
    venv = Path(cold.step("Find chart-review's install").outputs["venv"])

    install = cold.step("Install chart-review")
    assert install.outputs == {"installed": "true"}, (
        install.code,
        install.stdout,
        install.stderr[-3000:],
    )
    assert (tmp_path / "cold" / "pip.log").stat().st_size > 0  # pip ran
    assert cold.step("Keep chart-review's install").ran
    store = tmp_path / "cache-service"
    assert [p.name for p in store.iterdir()] == [key]  # saved under the workflow's key
    assert venv.parent.parent == machine and venv.name == key

    warm = _job(tmp_path / "warm", github, scenario, action_dir, wheelhouse, machine)

    assert warm.step("Find chart-review's install").outputs == {"key": key, "venv": str(venv)}
    assert warm.step("Restore chart-review's install").outputs["cache-hit"] == "true"
    assert warm.step("Install chart-review").outputs == {"installed": "false"}
    assert not (tmp_path / "warm" / "pip.log").exists()  # no pip at all
    assert not warm.step("Keep chart-review's install").ran  # the key is saved already
    for job in (cold, warm):
        review = job.step("Review the pull request")
        assert (review.ran, job.code) == (True, 1), review.stderr  # the QoS downgrade fails
        assert job.outputs["failures"] == "1"
        report = validated(Path(job.outputs["report"]).read_text())
        assert [f["rule"] for f in report["findings"] if f["severity"] == "failure"] == [
            "downgrade"
        ]
    assert [r.name for r in github.check_runs(REPO, scenario.head)] == RUNS  # edited, not added
    assert _shipped_schema(venv) == report_schema()


def _shipped_schema(venv: Path) -> dict[str, object]:
    """The report's schema the install holds, read outside this checkout (no `bot/` in its cwd)."""
    python = venv / "bin" / "python"
    proc = subprocess.run(
        [str(python), "-c", SHIPPED_SCHEMA], capture_output=True, text=True, cwd=venv, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert Path(found["module"]).is_relative_to(venv), found["module"]
    return dict(found["schema"])
