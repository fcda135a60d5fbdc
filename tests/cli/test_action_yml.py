"""action.yml, read as the runner reads it: a composite action whose every expression names an input
or step that exists, whose every step has a shell, and whose inputs reach the entry point."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.action.env import ActionInputs, read_inputs

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"
INPUT_REF = re.compile(r"\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")
INPUT_NAME = re.compile(r"\binputs\.([A-Za-z0-9_-]+)")  # in `${{ }}` and in `if:` expressions
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
STEP_OUTPUT_REF = re.compile(
    r"^\$\{\{\s*steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)\s*\}\}$"
)
EXPECTED_INPUTS = {
    "charts",
    "profiles",
    "fail-on",
    "comment",
    "config",
    "github-token",
    "format",
    "output-file",
    "offline",
    "kube-version",
    "api-versions",
    "values",
    "set",
    "set-string",
    "no-open-prs",
    "cache",
}


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
    assert set(action["outputs"]) == {"failures", "warnings", "report", "diff", "output-file"}
    assert action["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["fail-on"]["default"] == "failure"


def test_every_input_used_is_declared_and_every_declared_input_is_used(
    action: dict[str, Any],
) -> None:
    used = set(INPUT_NAME.findall(ACTION_YML.read_text()))
    assert used == set(action["inputs"])


def test_every_action_it_uses_is_pinned_to_a_commit(action: dict[str, Any]) -> None:
    """A tag can be moved to other code; a commit cannot."""
    uses = [s["uses"] for s in _steps(action) if "uses" in s]
    assert uses and all(PINNED.match(u) for u in uses), uses


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
    install = next(s for s in _steps(action) if s.get("id") == "install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$ACTION_PATH"' in install["run"] and "pip" in install["run"]


def test_the_review_step_passes_every_input_to_the_entry_point(action: dict[str, Any]) -> None:
    """The step's env, with each input at a value of its own, reads back as those values: no input
    is lost or misnamed between action.yml and bot/action/env.py."""
    review = next(s for s in _steps(action) if s.get("id") == "review")
    given = {
        "charts": "charts/a, charts/b",
        "profiles": "eks\naks",
        "fail-on": "warning",
        "comment": "false",
        "config": "ci/chart-review.yml",
        "github-token": "ghs_example",
        "format": "sarif",
        "output-file": "results/chart-review.sarif",
        "offline": "true",
        "kube-version": "1.29",
        "api-versions": "monitoring.coreos.com/v1, cert-manager.io/v1",
        "values": "ci/extra.yaml",
        "set": "image.tag=abc\nreplicas=2,name=x",
        "set-string": "build=0123",
        "no-open-prs": "true",
        "cache": "true",
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
        format="sarif",
        output_file="results/chart-review.sarif",
        offline=True,
        kube_version="v1.29.0",
        api_versions=("cert-manager.io/v1", "monitoring.coreos.com/v1"),
        values=("ci/extra.yaml",),
        sets=("image.tag=abc", "replicas=2,name=x"),
        set_strings=("build=0123",),
        open_prs=False,
    )
    assert environ["INPUT_GITHUB_TOKEN"] == "ghs_example"
    assert "chart-review" in review["run"] and "action" in review["run"]
