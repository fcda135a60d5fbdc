"""The App survives what production does to it: a process killed mid-review, a damaged mirror,
a fork's chart that tries to read the host. Nothing is lost and nothing leaks."""

from __future__ import annotations

import shutil
import signal
from contextlib import ExitStack
from pathlib import Path

from tests.support.app_harness import (
    app_settings,
    comment_event,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.check_runs import family, family_verdicts
from tests.support.cluster import (
    Cluster,
    app_env,
    healthy,
    json_lines,
    listening_socket,
    process,
)
from tests.support.fakegithub import FakeGitHub


def _reviewed(github: FakeGitHub, head: str) -> bool:
    runs = github.check_runs(REPO, head)
    summary = [c for c in github.issue_comments(REPO, 1) if "chart-review:summary" in c.body]
    return (
        len(runs) >= len(RUNS)
        and all(r.status == "completed" for r in runs)
        and any(head[:12] in c.body for c in summary)
    )


def test_a_review_killed_with_its_process_runs_after_the_restart(
    github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    env = app_env(github, tmp_path / "data")
    logs = tmp_path / "logs"
    logs.mkdir()
    listener = listening_socket()  # the same address across the restart
    fds = (listener.fileno(),)
    serve = ("serve", "--fd", str(listener.fileno()))  # one machine: receiver and worker in one
    payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
    with ExitStack() as stack:
        stack.callback(listener.close)
        first = stack.enter_context(process(*serve, env=env, log=logs / "first.log", pass_fds=fds))
        running = Cluster(f"http://127.0.0.1:{listener.getsockname()[1]}", env, logs, stack)
        wait_for(lambda: healthy(running.url), timeout=30)
        assert running.deliver("pull_request", payload, "kill-1").status_code == 202
        wait_for(
            lambda: any(m.get("message") == "reviewing" for m in json_lines(logs / "first.log")),
            what="the review to start",
        )
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert not _reviewed(github, scenario.head)

        stack.enter_context(process(*serve, env=env, log=logs / "second.log", pass_fds=fds))
        wait_for(
            lambda: _reviewed(github, scenario.head), timeout=90, what="the review after restart"
        )
    assert len(github.issue_comments(REPO, 1)) == 1
    assert len(github.check_runs(REPO, scenario.head)) == len(RUNS)


def test_a_damaged_mirror_is_rebuilt_and_the_review_is_right(
    github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with running_app(app_settings(github, data)) as app:
        payload = pull_request_event("opened", REPO, scenario.clone_url, 1, scenario.head)
        assert app.deliver("pull_request", payload).status_code == 202
        wait_for(lambda: _reviewed(github, scenario.head))
        mirror = data / "mirrors" / "acme" / "charts.git"
        shutil.rmtree(mirror / "objects")
        (mirror / "HEAD").write_text("ref: nowhere\n")

        github.set_permission(REPO, "maintainer", "write")
        comment = github.add_issue_comment(REPO, 1, "/chart-review", user="maintainer")
        event = comment_event(REPO, scenario.clone_url, 1, comment.id, comment.body, "maintainer")
        before = len(github.calls("PATCH", r"/check-runs/\d+$"))
        assert app.deliver("issue_comment", event).status_code == 202
        wait_for(lambda: len(github.calls("PATCH", r"/check-runs/\d+$")) >= before + 2 * len(RUNS))
        wait_for(lambda: _reviewed(github, scenario.head))
    runs = family_verdicts(github.check_runs(REPO, scenario.head))
    assert runs["chart-review/qos"] == "failure" and runs["chart-review/version"] == "success"


def test_a_symlink_out_of_the_chart_leaks_nothing_anywhere(
    github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    marker = "MARKER-5d1e-host-secret"
    secret = tmp_path / "host-secret.txt"
    secret.write_text(marker + "\n")
    git = scenario.git.checkout("wait-for-mysql")
    git.symlink("client/files/leak.txt", str(secret))
    git.symlink("client/files/inside.txt", "../../README.md")
    git.write("README.md", marker + " (outside the chart, inside the repo)\n")
    git.write(
        "client/templates/leak.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak}\n"
        'data:\n  a: {{ .Files.Get "files/leak.txt" | quote }}\n'
        '  b: {{ .Files.Get "files/inside.txt" | quote }}\n',
    )
    head = git.commit("Read the host").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)

    data = tmp_path / "data"
    with running_app(app_settings(github, data)) as app:
        payload = pull_request_event("opened", REPO, scenario.clone_url, 1, head)
        assert app.deliver("pull_request", payload).status_code == 202
        wait_for(lambda: _reviewed(github, head))

    published = [r.summary + (r.text or "") + repr(r.annotations) for r in github.check_runs(REPO)]
    published += [c.body for c in github.issue_comments(REPO, 1)]
    published += [c.body for c in github.review_comments(REPO, 1)]
    assert all(marker not in text for text in published)
    render = family(github.check_runs(REPO, head), "render")
    assert (
        render.conclusion == "failure" and "symbolic link; refused" in render.summary + render.text
    )
    for path in data.rglob("*"):
        if (
            path.is_file()
            and path.suffix not in {".pack", ".idx", ".rev"}
            and "mirrors" not in path.parts
        ):
            assert marker.encode() not in path.read_bytes(), path
