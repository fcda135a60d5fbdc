"""The Action reads the other repositories a PR's references name, as the App does: looked up
through the fake GitHub with the workflow's token, mirrored from the clone URL GitHub gives, and
only when the visibility rule and the config's allow-list let it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tests.cli.test_action import _run
from tests.support.action_job import as_actions, runner_env
from tests.support.app_scenario import REPO, Scenario
from tests.support.check_runs import family
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

DOCS = "acme/docs"
AUTHOR = "Codertocat"  # the PR's author in GitHub's example event
PERMISSION = rf"^/repos/{DOCS}/collaborators/[^/]+/permission$"
OPEN_PR = 77
QUOTES = (
    f"# Mirrors ROLLBACK ON THE DEGRADED PATHS in {DOCS}:deploy/jobs.yaml.\n"
    f"# Mirrors ONLY ON THE OPEN PR in {DOCS}:deploy/jobs.yaml.\n"
)


def _docs(tmp_path: Path, github: FakeGitHub, private: bool) -> None:
    """acme/docs: one heading on develop, another only on its open PR #77."""
    git = GitBuilder(tmp_path / "docs")
    jobs = "# ROLLBACK ON THE DEGRADED PATH\nreplicas: 1\n"
    base = git.write("deploy/jobs.yaml", jobs).commit("jobs").sha()
    head = git.branch("open-pr").write("deploy/jobs.yaml", jobs + "# ONLY ON THE OPEN PR\n")
    head_sha = head.commit("Only on the open PR").sha()
    git.pull_ref(OPEN_PR, "open-pr").checkout("develop")
    github.add_repo(
        DOCS,
        private=private,
        default_branch="develop",
        clone_url=str(git.path),
        branches={"develop": base},
    )
    github.add_pull(
        DOCS,
        number=OPEN_PR,
        head_sha=head_sha,
        base_sha=base,
        head_ref="open-pr",
        base_ref="develop",
    )


def _quoting(s: Scenario) -> Scenario:
    """PR #1 with QUOTES on top of client/values.yaml."""
    git = s.git.checkout("wait-for-mysql")
    values = (git.path / "client/values.yaml").read_text()
    head = git.write("client/values.yaml", QUOTES + values).commit("Quote the docs").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    return dataclasses.replace(s, head=head)


def _headings_run(github: FakeGitHub, head: str) -> str:
    run = family(github.check_runs(REPO, head), "headings")
    return f"{run.title}\n{run.summary}\n{run.text}"


def test_the_action_reads_a_public_linked_repository_with_the_workflow_token(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    _docs(tmp_path, github, private=False)
    s = _quoting(scenario)
    done = _run(runner_env(tmp_path / "run", github, s))

    assert done.code == 1, done.stderr
    text = _headings_run(github, s.head)
    assert f"resolves only once {DOCS}#{OPEN_PR} merges; merge that first" in text
    assert "Closest headings there: “ROLLBACK ON THE DEGRADED PATH” (line 1)." in text
    assert "not readable" not in text
    assert github.calls("GET", rf"^/repos/{DOCS}$")  # looked up through the API first
    assert (tmp_path / "run" / "runner" / "chart-review-links").is_dir()


def test_a_public_pr_learns_nothing_of_a_private_linked_repository(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    _docs(tmp_path, github, private=True)
    s = _quoting(scenario)
    done = _run(runner_env(tmp_path / "run", github, s))

    assert done.code == 1, done.stderr
    text = _headings_run(github, s.head)
    assert f"not checked: {DOCS} is not readable for this repository" in text
    assert "DEGRADED PATH”" not in text and f"#{OPEN_PR}" not in text
    assert not (tmp_path / "run" / "runner" / "chart-review-links" / DOCS).exists()


def _private_pr(github: FakeGitHub, env: dict[str, str]) -> dict[str, str]:
    """acme/charts made private, in the fake and in the event the runner hands the step."""
    with github.state.lock:
        github.state.repos[REPO].private = True
    path = Path(env["GITHUB_EVENT_PATH"])
    event = json.loads(path.read_text())
    event["pull_request"]["base"]["repo"]["private"] = True
    path.write_text(json.dumps(event))
    return env


def test_a_private_pr_learns_nothing_of_a_private_repository_its_author_cannot_read(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    _docs(tmp_path, github, private=True)
    github.set_permission(DOCS, AUTHOR, "none")
    s = _quoting(scenario)
    done = _run(_private_pr(github, runner_env(tmp_path / "run", github, s)))

    assert done.code == 1, done.stderr
    text = _headings_run(github, s.head)
    assert f"not checked: {DOCS} is not readable for this repository" in text
    assert "DEGRADED PATH”" not in text and f"#{OPEN_PR}" not in text
    assert f"#{OPEN_PR}" not in done.summary and "DEGRADED PATH”" not in done.summary
    assert len(github.calls("GET", PERMISSION)) == 1  # asked once, for both quotes
    assert not github.calls(path_regex=f"^/repos/{DOCS}/(pulls|contents|git)")
    assert not (tmp_path / "run" / "runner" / "chart-review-links" / DOCS).exists()


def test_a_private_pr_reads_a_private_repository_its_author_can_read(
    tmp_path: Path, github: FakeGitHub, scenario: Scenario
) -> None:
    as_actions(github)
    _docs(tmp_path, github, private=True)
    github.set_permission(DOCS, AUTHOR, "read")
    s = _quoting(scenario)
    done = _run(_private_pr(github, runner_env(tmp_path / "run", github, s)))

    assert done.code == 1, done.stderr
    text = _headings_run(github, s.head)
    assert f"resolves only once {DOCS}#{OPEN_PR} merges; merge that first" in text
    assert "Closest headings there: “ROLLBACK ON THE DEGRADED PATH” (line 1)." in text
    assert len(github.calls("GET", PERMISSION)) == 1
