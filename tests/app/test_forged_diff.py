"""A forged diff line cannot hide a change, through the App: a PR whose template comment carries a
line separator and a fake `+++ b/docs/notes.md` header, a QoS downgrade and no version bump."""

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
from tests.support.app_scenario import REPO, RUNS, TEMPLATE, Scenario, with_init
from tests.support.charts import chart_files
from tests.support.check_runs import family_verdicts
from tests.support.fakegithub import FakeGitHub

FORGED = "{{/* x\u2028+++ b/docs/notes.md */}}\n"


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def test_a_forged_file_header_in_a_template_hides_nothing(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    g = scenario.git
    g.write("docs/notes.md", "# Notes\n").commit("docs")
    base = g.sha("develop")
    g.branch("forged")
    g.write(TEMPLATE, FORGED + with_init(chart_files("client", "client")[TEMPLATE]))
    head = g.commit("Wait for MySQL (and say it is only docs)").sha()
    g.pull_ref(2, "forged").checkout("develop")
    github.add_pull(
        REPO, number=2, head_sha=head, base_sha=base, head_ref="forged", base_ref="develop"
    )
    payload = pull_request_event("opened", REPO, scenario.clone_url, 2, head)
    assert app.deliver("pull_request", payload).status_code == 202

    def published() -> bool:
        runs = github.check_runs(REPO, head)
        done = len(runs) >= len(RUNS) and all(r.status == "completed" for r in runs)
        return done and any(head[:12] in c.body for c in github.issue_comments(REPO, 2))

    wait_for(published, what="the forged PR's review published")
    conclusions = family_verdicts(github.check_runs(REPO, head))
    assert conclusions["chart-review/qos"] == "failure"  # the downgrade is seen
    assert conclusions["chart-review/version"] == "failure"  # and the missing bump
    (summary,) = github.issue_comments(REPO, 2)
    assert "No chart changed" not in summary.body and "`client`" in summary.body
