"""The duplicates check through the App: the other PRs' bodies and opening times come from the API
(the fake GitHub, over real HTTP), and a closed PR is nobody's duplicate."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.app.github.app import AppCredentials, GitHubApp
from bot.app.review_pull import review_pull
from bot.git.repo import GitRepo
from bot.model.context import no_links
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from tests.support.charts import chart_files
from tests.support.check_runs import family
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

REPO = "acme/charts"
OPENED = datetime(2024, 3, 4, 6, 15, tzinfo=UTC)


@pytest.fixture
def git(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    for name in ("mine", "open", "closed"):
        g.checkout("develop").branch(name).write(f"app/{name}.txt", f"{name}\n").commit(name)
    return g.checkout("develop")


def add_pulls(github: FakeGitHub, g: GitBuilder, closed_body: str = "Fixes #5") -> None:
    github.add_repo(REPO, default_branch="develop", branches={"develop": g.sha("develop")})
    pulls: list[tuple[str, str, dict[str, Any]]] = [
        ("closed", "Old attempt", {"body": closed_body, "state": "closed"}),
        ("open", "Earlier attempt", {"body": "Resolves: #5", "created_at": OPENED}),
        ("mine", "This one", {"body": "Closes #5"}),
    ]
    for number, (branch, title, extra) in enumerate(pulls, start=1):
        github.add_pull(
            REPO,
            number=number,
            head_sha=g.sha(branch),
            head_ref=branch,
            base_sha=g.sha("develop"),
            base_ref="develop",
            title=title,
            **extra,
        )


def app_review(github: FakeGitHub, g: GitBuilder, number: int = 3) -> Any:
    creds = AppCredentials(github.app_id, github.app_private_key, github.url, 0.0, 0.0, 0.05)
    client = GitHubApp(creds).repo(REPO, 1)
    pr = client.pull(number)
    assert pr is not None
    repo = GitRepo(g.path)
    try:
        review_pull(client, repo, pr, client.open_pulls(), EmbeddedHelm(), RenderCache(), _no_links)
    finally:
        repo.close()
    return family(github.check_runs(REPO, g.sha("mine")), "duplicates")


def _no_links(home: object, config: object) -> Any:
    return no_links


def test_the_open_pr_closing_the_same_issue_is_named_with_its_opening(
    github: FakeGitHub, git: GitBuilder
) -> None:
    add_pulls(github, git)
    run = app_review(github, git)
    assert (run.conclusion, run.title) == ("neutral", "1 warning")
    assert run.text == (
        "#### ⚠️ #2 “Earlier attempt” also closes #5\n\n#2 “Earlier attempt” closes #5 too. #2 "
        "was opened first, opened 2024-03-04. One of the two is likely redundant: compare them "
        "before reviewing both."
    )  # and not #1, which closed the same issue and is closed


def test_a_closed_pr_alone_is_no_duplicate(github: FakeGitHub, git: GitBuilder) -> None:
    add_pulls(github, git)
    github.update_pull(github.state.pulls[(REPO, 2)], body="Adds a note.")
    run = app_review(github, git)
    assert (run.conclusion, run.text) == ("success", "")


def test_a_backport_to_another_branch_is_no_duplicate(github: FakeGitHub, git: GitBuilder) -> None:
    """Found on a public repository (issue 38): the same fix backported to a release branch was
    said to duplicate the PR into develop. The App knows each PR's base: only PRs into the same
    branch are compared; the same PR twice (one head) is one change."""
    add_pulls(github, git)
    git.branch("release-1.x", "develop").write("app/r.txt", "r\n").commit("release moves")
    git.checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 2)], base_ref="release-1.x")
    run = app_review(github, git)
    assert (run.conclusion, run.text) == ("success", "")
