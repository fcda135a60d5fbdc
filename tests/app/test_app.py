"""The App end to end: signed deliveries in over real HTTP, reviews run by the real worker against a
real mirror of a real git repository, results published through PyGithub to the fake GitHub."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.jobspec import RepoRef, ReviewJob
from tests.support.app_harness import (
    RunningApp,
    app_settings,
    comment_event,
    example,
    pull_request_event,
    push_event,
    retarget,
    running_app,
    wait_for,
)
from tests.support.app_scenario import (
    NAMES_BEFORE_ONE_RUN,
    PER_CHECK_CONFIG,
    PER_CHECK_RUNS,
    REPO,
    RUNS,
    TEMPLATE,
    Scenario,
    build_scenario,
    chart_yaml,
    with_init,
)
from tests.support.charts import chart_files
from tests.support.check_runs import family, family_verdicts
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def _completed(github: FakeGitHub, head: str, count: int = len(RUNS)) -> bool:
    runs = github.check_runs(REPO, head)
    return len(runs) >= count and all(r.status == "completed" for r in runs)


def _reviewed(github: FakeGitHub, head: str) -> bool:
    """Every run completed and the summary comment speaks of this head: the job has published."""
    summary = [c for c in github.issue_comments(REPO, 1) if "chart-review:summary" in c.body]
    return _completed(github, head) and any(head[:12] in c.body for c in summary)


def _conclusions(github: FakeGitHub, head: str) -> dict[str, str | None]:
    return family_verdicts(github.check_runs(REPO, head))


def _open(app: RunningApp, s: Scenario, head: str | None = None, action: str = "opened") -> None:
    payload = pull_request_event(action, REPO, s.clone_url, 1, head or s.head)
    assert app.deliver("pull_request", payload).status_code == 202


def test_opened_pr_gets_check_runs_summary_and_inline_comment(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head), what="the review published")

    assert _conclusions(github, scenario.head) == {
        "chart-review": "failure",  # the one run, with a section per check
        **{name: "success" for name in PER_CHECK_RUNS},
        "chart-review/qos": "failure",
    }
    comments = github.issue_comments(REPO, 1)
    assert len(comments) == 1 and "<!-- chart-review:summary -->" in comments[0].body
    inline = github.review_comments(REPO, 1)
    init_line = (
        with_init(chart_files("client", "client")[TEMPLATE])
        .splitlines()
        .index("        - name: wait-for-mysql")
        + 1
    )
    assert [(c.path, c.line) for c in inline] == [(TEMPLATE, init_line)]
    assert "wait-for-mysql" in inline[0].body and "Burstable" in inline[0].body


def test_synchronize_edits_the_summary_and_does_not_repeat_inline_comments(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head))
    git = scenario.git.checkout("wait-for-mysql")
    new_head = git.write("client/README.md", "# client\n").commit("Docs").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=new_head)

    _open(app, scenario, new_head, action="synchronize")
    wait_for(lambda: _reviewed(github, new_head), what="the new head reviewed")

    assert _conclusions(github, new_head)["chart-review/qos"] == "failure"
    assert len(github.issue_comments(REPO, 1)) == 1
    assert new_head[:12] in github.issue_comments(REPO, 1)[0].body
    assert len(github.review_comments(REPO, 1)) == 1


def test_editing_the_description_re_reviews_the_same_head(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    # The headings check reads the description: a fixed reference must turn the run green
    # without a push.
    pr = github.state.pulls[(REPO, 1)]
    github.update_pull(
        pr, body=f'Keeps the order: see "ROLLBACK ON THE DEGRADED PATH" in {TEMPLATE}.'
    )
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head), what="the first review")
    assert _conclusions(github, scenario.head)["chart-review/headings"] == "failure"

    github.update_pull(pr, body="Waits for MySQL before the client starts.")
    payload = pull_request_event("edited", REPO, scenario.clone_url, 1, scenario.head)
    payload["changes"] = {"body": {"from": 'Keeps the order: see "ROLLBACK ON THE ...'}}
    assert app.deliver("pull_request", payload).status_code == 202
    wait_for(
        lambda: _conclusions(github, scenario.head).get("chart-review/headings") == "success",
        what="the headings run re-run on the same head",
    )
    assert len(github.check_runs(REPO, scenario.head)) == len(RUNS)  # edited in place


def test_the_same_delivery_twice_is_reviewed_once(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
    first = app.deliver("pull_request", payload, delivery="same-id")
    second = app.deliver("pull_request", payload, delivery="same-id")
    assert (first.status_code, second.status_code) == (202, 200)
    wait_for(lambda: _reviewed(github, scenario.head))
    wait_for(app.idle, what="an empty queue")
    assert len(github.check_runs(REPO, scenario.head)) == len(RUNS)
    assert len(github.calls("POST", r"/check-runs$")) == len(RUNS)


def test_a_burst_of_pushes_costs_one_review_of_the_last_head(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    git = scenario.git.checkout("wait-for-mysql")
    heads = [
        git.write("client/README.md", f"# take {i}\n").commit(f"take {i}").sha() for i in range(10)
    ]
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=heads[-1])

    for head in heads:
        _open(app, scenario, head, action="synchronize")
    wait_for(lambda: _reviewed(github, heads[-1]))
    wait_for(app.idle, what="an empty queue")

    reviewed = {r.head_sha for r in github.check_runs(REPO)}
    assert reviewed == {heads[-1]}
    assert len(github.check_runs(REPO)) == len(RUNS)


def test_a_writer_command_re_reviews_and_reacts(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    github.set_permission(REPO, "maintainer", "write")
    comment = github.add_issue_comment(REPO, 1, "/chart-review run", user="maintainer")
    payload = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, "maintainer")
    assert app.deliver("issue_comment", payload).status_code == 202

    wait_for(lambda: _reviewed(github, scenario.head), what="the commanded review")
    assert [r.content for r in github.reactions(comment.id)] == ["eyes"]


def test_a_reader_command_gets_a_reply_and_no_review(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    github.set_permission(REPO, "visitor", "read")
    comment = github.add_issue_comment(REPO, 1, "/chart-review", user="visitor")
    payload = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, "visitor")
    assert app.deliver("issue_comment", payload).status_code == 202

    wait_for(lambda: len(github.issue_comments(REPO, 1)) == 2, what="the reply")
    reply = github.issue_comments(REPO, 1)[-1]
    assert "@visitor" in reply.body and "write, maintain or admin" in reply.body
    wait_for(app.idle)
    assert github.check_runs(REPO) == []


def test_develop_taking_the_version_turns_the_version_check_red(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head))
    assert _conclusions(github, scenario.head)["chart-review/version"] == "success"

    # Another PR lands 1.0.1 on develop; nobody pushes to PR #1.
    git = scenario.git
    tip = git.write("client/Chart.yaml", chart_yaml("1.0.1")).commit("Release 1.0.1").sha()
    github.set_branch(REPO, "develop", tip)
    assert (
        app.deliver("push", push_event(REPO, scenario.clone_url, "develop", tip)).status_code == 202
    )

    def version_failed() -> bool:
        return _conclusions(github, scenario.head).get("chart-review/version") == "failure"

    wait_for(version_failed, what="the version check to turn red")
    assert len(github.check_runs(REPO, scenario.head)) == len(
        RUNS
    )  # edited in place, not duplicated
    assert len(github.issue_comments(REPO, 1)) == 1


def _second_pr(github: FakeGitHub, s: Scenario, number: int = 2, version: str = "1.0.1") -> str:
    """Another open PR that claims `version` for the same chart."""
    git = s.git.branch(f"other-{number}", "develop")
    head = git.write("client/Chart.yaml", chart_yaml(version))
    head = git.write("client/values.yaml", "resources: {}\n").commit(f"Other {number}").sha()
    git.pull_ref(number, f"other-{number}").checkout("develop")
    github.add_pull(
        REPO,
        number=number,
        head_sha=head,
        base_sha=s.base,
        head_ref=f"other-{number}",
        base_ref="develop",
    )
    return head


def test_closing_a_racing_pr_re_checks_the_pr_it_raced(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _second_pr(github, scenario)
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head))
    assert _conclusions(github, scenario.head)["chart-review/version"] == "neutral"  # race: warning

    github.update_pull(github.state.pulls[(REPO, 2)], state="closed")
    closed = pull_request_event(
        "closed", REPO, scenario.clone_url, 2, github.state.pulls[(REPO, 2)].head_sha
    )
    assert app.deliver("pull_request", closed).status_code == 202

    def race_gone() -> bool:
        return _conclusions(github, scenario.head).get("chart-review/version") == "success"

    wait_for(race_gone, what="PR #1's version check to drop the race warning")


def test_the_release_board_is_one_issue_edited_in_place(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    git = scenario.git
    tip = git.write(".github/chart-review.yml", "release_board: true\n").commit("Board").sha()
    github.set_branch(REPO, "develop", tip)
    _open(app, scenario)
    wait_for(lambda: len(github.issues(REPO)) == 1, what="the board issue")
    [board] = github.issues(REPO)
    assert board.title == "Chart version board" and "#1" in board.body and "1.0.1" in board.body

    _second_pr(github, scenario, number=2, version="1.0.2")
    assert (
        app.deliver("push", push_event(REPO, scenario.clone_url, "develop", tip)).status_code == 202
    )
    wait_for(lambda: "#2" in github.issues(REPO)[0].body, what="the board to list PR #2")
    assert len(github.issues(REPO)) == 1


def test_an_unreadable_config_completes_every_run_with_the_reason(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    git = scenario.git
    tip = git.write(".github/chart-review.yml", "chekcs: {}\n").commit("Typo").sha()
    github.set_branch(REPO, "develop", tip)
    _open(app, scenario)

    wait_for(lambda: _completed(github, scenario.head), what="every run completed")
    runs = github.check_runs(REPO, scenario.head)
    assert {r.conclusion for r in runs} == {"neutral"}
    assert all("chekcs" in r.summary and "could not complete" in r.summary for r in runs)


def test_check_run_rerequested_reviews_that_head_again(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _open(app, scenario)
    wait_for(lambda: _reviewed(github, scenario.head))
    before = len(github.calls("PATCH", r"/check-runs/\d+$"))
    payload = example("check_run.rerequested")
    retarget(payload, REPO, scenario.clone_url)
    payload["check_run"]["head_sha"] = scenario.head
    payload["check_run"]["pull_requests"] = []  # a fork's branch: the worker finds the PR by head
    assert app.deliver("check_run", payload).status_code == 202

    wait_for(lambda: len(github.calls("PATCH", r"/check-runs/\d+$")) >= before + 2 * len(RUNS))
    wait_for(lambda: _completed(github, scenario.head))
    assert len(github.check_runs(REPO, scenario.head)) == len(RUNS)


def _backend(tmp_path: Path, github: FakeGitHub) -> None:
    """acme/backend: the heading exists only on its open PR #12."""
    git = GitBuilder(tmp_path / "backend")
    base = git.write("deploy/jobs.yaml", "# SINGLE REPLICA — on purpose.\nreplicas: 1\n")
    base = git.commit("Jobs").sha()
    git.branch("rollback")
    git.write(
        "deploy/jobs.yaml",
        "# SINGLE REPLICA — on purpose.\nreplicas: 1\n"
        "# ROLLBACK ON THE DEGRADED PATH — backend#1922.\nrollback: degraded\n",
    )
    head = git.commit("Roll back on the degraded path").sha()
    git.pull_ref(12, "rollback").checkout("develop")
    github.add_repo(
        "acme/backend",
        default_branch="develop",
        clone_url=str(git.path),
        branches={"develop": base},
    )
    github.add_pull(
        "acme/backend",
        number=12,
        head_sha=head,
        base_sha=base,
        head_ref="rollback",
        base_ref="develop",
    )


def test_a_heading_in_another_installed_repository_is_read_through_the_app(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _backend(tmp_path, github)
    git = scenario.git.checkout("wait-for-mysql")
    values = (git.path / "client/values.yaml").read_text()
    quote = "# Mirrors ROLLBACK ON THE DEGRADED PATH in acme/backend:deploy/jobs.yaml — both sides agree.\n"
    head = git.write("client/values.yaml", quote + values).commit("Say what it mirrors").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)

    _open(app, scenario, head, action="synchronize")
    wait_for(lambda: _reviewed(github, head))

    run = family(github.check_runs(REPO, head), "headings")
    assert run.conclusion == "neutral"
    assert "resolves only once acme/backend#12 merges; merge that first" in run.text


def test_a_heading_in_an_unreadable_repository_is_a_notice_not_a_pass(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    git = scenario.git.checkout("wait-for-mysql")
    values = (git.path / "client/values.yaml").read_text()
    quote = "# Mirrors ROLLBACK ON THE DEGRADED PATH in acme/secret:deploy/jobs.yaml.\n"
    head = git.write("client/values.yaml", quote + values).commit("Quote a private repo").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)

    _open(app, scenario, head, action="synchronize")
    wait_for(lambda: _reviewed(github, head))

    run = family(github.check_runs(REPO, head), "headings")
    assert run.conclusion == "success"  # a notice: nothing the PR must fix, but said out loud
    assert "not checked: acme/secret is not readable for this repository" in run.text


def test_a_pr_moving_onto_anothers_version_re_checks_the_other(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    other = _second_pr(github, scenario, version="1.0.2")  # #1 claims 1.0.1: no race yet
    payload = pull_request_event("opened", REPO, scenario.clone_url, 2, other)
    assert app.deliver("pull_request", payload).status_code == 202
    wait_for(lambda: _completed(github, other))
    assert _conclusions(github, other)["chart-review/version"] == "success"

    git = scenario.git.checkout("wait-for-mysql")
    head = git.write("client/Chart.yaml", chart_yaml("1.0.2")).commit("Take 1.0.2").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)
    _open(app, scenario, head, action="synchronize")  # nothing is sent about #2

    def other_races_pr_1() -> bool:
        return _conclusions(github, other).get("chart-review/version") == "neutral"

    wait_for(other_races_pr_1, what="PR #2's version check to warn of PR #1")
    run = family(github.check_runs(REPO, other), "version")
    assert "#1" in run.summary + (run.text or "")


def test_a_queued_job_cannot_choose_where_the_token_is_sent(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    # A job that reached the queue some other way than a signed delivery, naming a clone URL of
    # its own: the mirror is fetched from where GitHub's API says the repository lives.
    decoy = GitBuilder(tmp_path / "decoy").write("x.txt", "x\n").commit("decoy")
    job = ReviewJob(RepoRef(REPO, 1, str(decoy.path)), 1, scenario.head, "planted", "d-planted")
    app.process.queue.enqueue(job)
    wait_for(lambda: _reviewed(github, scenario.head), what="the planted job's review")
    assert _conclusions(github, scenario.head)["chart-review/qos"] == "failure"  # the real repo
    configs = [c.read_text() for c in (tmp_path / "data").rglob("config") if c.is_file()]
    assert configs and not any(str(decoy.path) in text for text in configs)


def test_stopping_the_app_leaves_no_render_process_or_thread(
    github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        _open(running, scenario)
        wait_for(lambda: _reviewed(github, scenario.head), what="the review published")
        release, end_threads = running.process.queue.on_close  # its renderer's, its resources'
        pids = release.__self__.pids()  # type: ignore[attr-defined]  # the worker's render pool
        assert pids
        pools = end_threads.__self__.pools  # type: ignore[attr-defined]
        prefixes = tuple(f"{p.prefix}_" for p in pools.all())  # a pool names its threads so
    for pid in pids:  # closed with the App, not left for the interpreter's exit
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not [t.name for t in threading.enumerate() if t.name.startswith(prefixes)]


def test_check_runs_per_check_gives_today_s_run_names_through_the_app(
    app: RunningApp, github: FakeGitHub, tmp_path: Path
) -> None:
    """For branch protection that requires each: `check_runs: per-check` in the config at base
    gives the run names of before the one run was the default, exactly."""
    s = build_scenario(tmp_path / "per-check", github, config=PER_CHECK_CONFIG)
    _open(app, s)
    wait_for(lambda: _completed(github, s.head, len(PER_CHECK_RUNS)), what="every run completed")

    runs = {r.name: r.conclusion for r in github.check_runs(REPO, s.head)}
    assert sorted(runs) == sorted(PER_CHECK_RUNS)
    assert set(NAMES_BEFORE_ONE_RUN) <= set(runs)
    assert runs["chart-review/qos"] == "failure" and runs["chart-review/version"] == "success"
