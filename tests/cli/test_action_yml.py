"""action.yml, read as the runner reads it: a composite action whose every expression names an input
or step that exists, whose every step has a shell, and whose inputs reach the entry point."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli.action_env import ActionInputs, read_inputs

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"
INPUT_REF = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")
STEP_OUTPUT_REF = re.compile(
    r"^\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)\s*\}\}$"
)
EXPECTED_INPUTS = {"charts", "profiles", "fail-on", "comment", "config", "github-token"}


@pytest.fixture(scope="module")
def action() -> dict[str, Any]:
    loaded = yaml.safe_load(ACTION_YML.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _steps(action: dict[str, Any]) -> list[dict[str, Any]]:
    return list(action["runs"]["steps"])


def test_it_is_a_composite_action_with_the_issue_s_inputs_and_outputs(
    action: dict[str, Any],
) -> None:
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == EXPECTED_INPUTS
    assert set(action["outputs"]) == {"failures", "warnings", "report", "diff"}
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["fail-on"]["default"] == "failure"


def test_every_input_used_is_declared_and_every_declared_input_is_used(
    action: dict[str, Any],
) -> None:
    used = set(INPUT_REF.findall(ACTION_YML.read_text()))
    assert used == set(action["inputs"])


def test_every_run_step_has_a_shell(action: dict[str, Any]) -> None:
    run_steps = [s for s in _steps(action) if "run" in s]
    assert run_steps, "a composite action of run steps"
    assert [s.get("shell") for s in run_steps] == ["bash"] * len(run_steps)


def test_outputs_come_from_a_step_that_exists(action: dict[str, Any]) -> None:
    ids = {s["id"] for s in _steps(action) if "id" in s}
    for name, output in action["outputs"].items():
        match = STEP_OUTPUT_REF.match(output["value"])
        assert match, f"output {name}: {output['value']!r} is no step output"
        assert match.group(1) in ids
        assert match.group(2) == name  # the entry point writes `failures=`, `warnings=`, `report=`


def test_the_package_is_installed_from_the_action_s_own_path(action: dict[str, Any]) -> None:
    install = _steps(action)[0]
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"] and "pip" in install["run"]


def test_the_review_step_passes_every_input_to_the_entry_point(action: dict[str, Any]) -> None:
    """The step's env, with each input at a value of its own, reads back as those values: no input
    is lost or misnamed between action.yml and bot/cli/action_env.py."""
    review = next(s for s in _steps(action) if s.get("id") == "review")
    given = {
        "charts": "charts/a, charts/b",
        "profiles": "eks\naks",
        "fail-on": "warning",
        "comment": "false",
        "config": "ci/chart-review.yml",
        "github-token": "ghs_example",
    }
    environ = {
        key: INPUT_REF.sub(lambda m: given[m.group(1)], str(value))
        for key, value in review["env"].items()
    }
    assert read_inputs(environ) == ActionInputs(
        charts=("charts/a", "charts/b"),
        profiles=("eks", "aks"),
        fail_on="warning",
        comment=False,
        config="ci/chart-review.yml",
    )
    assert environ["INPUT_GITHUB_TOKEN"] == "ghs_example"
    assert "chart-review" in review["run"] and "action" in review["run"]


FAKE_PYTHON3 = """#!/bin/sh
# `python3 -m venv DIR`: a venv whose pip notes what it installs and leaves the entry point.
echo "python3 $*" >> "$LOG"
mkdir -p "$3/bin"
cat > "$3/bin/pip" <<'PIP'
#!/bin/sh
echo "pip $*" >> "$LOG"
printf '#!/bin/sh\\n' > "$(dirname "$0")/chart-review"
chmod +x "$(dirname "$0")/chart-review"
PIP
chmod +x "$3/bin/pip"
"""


def test_a_venv_installed_from_the_same_package_files_is_used_as_it_is(
    action: dict[str, Any], tmp_path: Path
) -> None:
    """The install step makes the venv and installs the package once for a set of package files:
    run again over the venv (a cache restored it), it installs nothing; a package file changed,
    it installs again. A fake `python3 -m venv` and pip say what was run."""
    package = tmp_path / "action"
    for path in ("pyproject.toml", "bot/x.py", "checks/y.py", "webhooks/z.py"):
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(f"# {path}\n")
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    (fake / "python3").write_text(FAKE_PYTHON3)
    (fake / "python3").chmod(0o755)
    log = tmp_path / "log"
    env = {
        "PATH": f"{fake}:{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "ACTION_PATH": str(package),
        "LOG": str(log),
    }
    install = _steps(action)[0]["run"]

    def run() -> list[str]:
        subprocess.run(["bash", "-e", "-c", install], env=env, check=True, capture_output=True)
        return log.read_text().splitlines() if log.exists() else []

    venv = tmp_path / "runner" / "chart-review-venv"
    made = [f"python3 -m venv {venv}", f"pip install --quiet --disable-pip-version-check {package}"]
    assert run() == made
    assert run() == made  # the same files: nothing run
    (package / "bot" / "x.py").write_text("# changed\n")
    assert run() == made + made
