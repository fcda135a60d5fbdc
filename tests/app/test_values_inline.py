"""Issue 40, item 3, through the real App: a downgrade a values change causes is an inline review
comment on that values line, with the values edit that fixes it as a suggested change, published
through PyGithub to the fake GitHub (which checks every request against GitHub's description); the
next push edits that comment (one per line and rule, listing the profiles), never repeats it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.app_scenario import REPO
from tests.support.charts import CT_LINT_PATH, CT_LINT_WORKFLOW, chart_files
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

VALUES = "client/values.yaml"
BASE_BLOCK = (
    "resources:\n  requests:\n    cpu: 100m\n    memory: 64Mi\n  limits:\n    memory: 64Mi\n"
)


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


@pytest.fixture
def git(tmp_path: Path, github: FakeGitHub) -> GitBuilder:
    """develop holds chart client (profiles burst, equal); PR #1 empties values.yaml's resources,
    which turns profile burst's pod BestEffort (equal sets its own)."""
    g = GitBuilder(tmp_path / "charts").write(CT_LINT_PATH, CT_LINT_WORKFLOW)
    for path, text in chart_files("client", "client", "1.0.0").items():
        g.write(path, text)
    base = g.commit("client 1.0.0").sha()
    g.branch("no-resources").write(VALUES, "resources: {}\n")
    g.write("client/Chart.yaml", chart_files("client", "client", "1.0.1")["client/Chart.yaml"])
    head = g.commit("Leave resources to the cluster").sha()
    g.pull_ref(1, "no-resources").checkout("develop")
    github.add_repo(
        REPO, default_branch="develop", clone_url=str(g.path), branches={"develop": base}
    )
    github.add_pull(
        REPO, number=1, head_sha=head, base_sha=base, head_ref="no-resources", base_ref="develop"
    )
    return g


def _deliver(app: RunningApp, git: GitBuilder, head: str, action: str) -> None:
    payload = pull_request_event(action, REPO, str(git.path), 1, head)
    assert app.deliver("pull_request", payload).status_code == 202


def _published(github: FakeGitHub, head: str) -> bool:
    summary = [c for c in github.issue_comments(REPO, 1) if "chart-review:summary" in c.body]
    return any(head[:12] in c.body for c in summary)


def test_a_values_driven_downgrade_is_an_inline_comment_on_the_values_line_edited_on_re_runs(
    app: RunningApp, github: FakeGitHub, git: GitBuilder
) -> None:
    head = git.sha("no-resources")
    _deliver(app, git, head, "opened")
    wait_for(lambda: _published(github, head), what="the first review published")
    [comment] = github.review_comments(REPO, 1)
    assert (comment.path, comment.line, comment.side) == (VALUES, 1, "RIGHT")
    assert comment.body.startswith("<!-- chart-review:inline qos/downgrade -->\n")
    assert "`resources: {}` at client/values.yaml:1 sets `resources` of container client" in (
        comment.body
    )
    assert "profile `burst`" in comment.body
    # The base's values, put back: proven by a render before it was offered.
    assert comment.body.endswith(f"```suggestion\n{BASE_BLOCK}```")

    # The next push makes profile equal downgrade too, from the same values line.
    git.checkout("no-resources").write("client/ci/equal-values.yaml", "{}\n")
    new_head = git.commit("equal follows the defaults").sha()
    git.pull_ref(1, "no-resources").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=new_head)
    _deliver(app, git, new_head, "synchronize")
    wait_for(lambda: _published(github, new_head), what="the second review published")

    [edited] = github.review_comments(REPO, 1)  # edited in place, not posted again
    assert edited.id == comment.id and (edited.path, edited.line) == (VALUES, 1)
    assert "profile `burst, equal`" in edited.body
    # Putting back the base's values fixes burst but not equal (Guaranteed at base): no
    # suggestion is offered for the two together.
    assert "```suggestion" not in edited.body
    assert len(github.reviews(REPO, 1)) == 1
