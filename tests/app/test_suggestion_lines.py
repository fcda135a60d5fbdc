"""Through the App: a suggested change in a template whose comment holds form feeds is posted on the
lines git and GitHub number as the ones it verified, not three lines further down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.textlines import git_lines
from tests.cli.test_line_numbers import CHART_YAML, HEAD, SHIPPER_LIMITS, TEMPLATE, WEB
from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

REPO = "acme/web"


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def test_the_suggestion_is_posted_on_gits_line(
    app: RunningApp, github: FakeGitHub, tmp_path: Path
) -> None:
    g = GitBuilder(tmp_path / "web")
    base = g.write("app/Chart.yaml", CHART_YAML).write(TEMPLATE, WEB).commit("web").sha()
    g.branch("shipper").write(TEMPLATE, HEAD)
    head = g.commit("a log shipper sidecar").sha()
    g.pull_ref(1, "shipper").checkout("develop")
    github.add_repo(
        REPO, default_branch="develop", clone_url=str(g.path), branches={"develop": base}
    )
    github.add_pull(
        REPO, number=1, head_sha=head, base_sha=base, head_ref="shipper", base_ref="develop"
    )
    payload = pull_request_event("opened", REPO, str(g.path), 1, head)
    assert app.deliver("pull_request", payload).status_code == 202
    wait_for(lambda: github.review_comments(REPO, 1), what="the review's inline comments")
    [posted] = [c for c in github.review_comments(REPO, 1) if "```suggestion" in c.body]
    # On the shipper's limits as GitHub numbers them (splitlines' number is three lines on, the
    # guard's `readOnlyRootFilesystem: true`, which the one click would have replaced).
    assert (posted.path, posted.line, posted.start_line) == (TEMPLATE, SHIPPER_LIMITS, None)
    assert git_lines(HEAD)[posted.line - 1] == "              memory: 32Mi"
    assert posted.body.endswith(
        "```suggestion\n              memory: 32Mi\n              cpu: 50m\n```"
    )
