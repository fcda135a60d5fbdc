"""A GitHub Actions job as the Action sees it, around the fake GitHub: a `pull_request` event for PR #1
of the App tests' repository (tests/support/app_scenario.py), the checkout actions/checkout leaves,
and the environment the runner sets."""

from __future__ import annotations

import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from bot.action.api import ACTIONS_APP_ID, ACTIONS_LOGIN
from tests.support.app_harness import example
from tests.support.app_scenario import REPO, Scenario
from tests.support.fakegithub import FakeGitHub

FORK = "contributor/charts"


def event(s: Scenario, fork: bool = False) -> dict[str, Any]:
    """GitHub's example `pull_request.opened`, made PR #1 of acme/charts."""
    payload = copy.deepcopy(example("pull_request.opened"))
    owner, name = REPO.split("/")
    payload["repository"].update(full_name=REPO, name=name)
    payload["repository"]["owner"]["login"] = owner
    payload.pop("installation", None)  # a workflow's event names no App installation
    pr = payload["pull_request"]
    pr["number"] = payload["number"] = 1
    pr["title"], pr["body"] = "Update the chart", None
    pr["head"].update(sha=s.head, ref="wait-for-mysql")
    pr["base"].update(sha=s.base, ref="develop")
    pr["base"]["repo"].update(full_name=REPO, private=False)
    pr["head"]["repo"].update(full_name=FORK if fork else REPO, fork=fork)
    return payload


def checkout(tmp_path: Path, s: Scenario) -> Path:
    """What actions/checkout leaves: develop only, so the PR's head must be fetched from origin."""
    workspace = tmp_path / "workspace"
    subprocess.run(
        ["git", "clone", "-q", "--single-branch", "-b", "develop", s.clone_url, str(workspace)],
        check=True,
    )
    return workspace


def runner_env(
    tmp_path: Path,
    github: FakeGitHub,
    s: Scenario,
    permissions: dict[str, str] | None = None,
    **extra: str,
) -> dict[str, str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event(s, fork=extra.pop("fork", "") == "yes")))
    (tmp_path / "runner").mkdir(exist_ok=True)
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env = {
        **kept,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": github.issue_token(permissions=permissions),
        "GITHUB_WORKSPACE": str(checkout(tmp_path, s)),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "runner" / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "runner" / "output"),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_SECONDS_BETWEEN_REQUESTS": "0",
        "GITHUB_SECONDS_BETWEEN_WRITES": "0",
        "GITHUB_RETRY_BACKOFF": "0.05",
    }
    env.update(extra)
    return env


def as_actions(github: FakeGitHub) -> None:
    """What a workflow token writes, GitHub attributes to the GitHub Actions app."""
    with github.state.lock:
        github.state.app_id = ACTIONS_APP_ID
        github.state.app_slug = "github-actions"
        github.state.bot_login = ACTIONS_LOGIN
