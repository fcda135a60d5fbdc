"""Dependencies the App refuses: an archive that does not match its chart repository's index, and
a Chart.lock whose digest does not match its chart's dependencies. The App for real (uvicorn on
loopback, the worker, PyGithub against the fake GitHub) and a real chart repository on 127.0.0.1:
the PR's runs say it, and so do the operator's log line, with the delivery id, and metric."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.chart_repo import ChartRepo, ChartSpec
from tests.support.check_runs import family, family_verdicts
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder
from tests.support.logs import JsonLogs

REPO = "acme/platform"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-lib\n"
LIB = ChartSpec("lib", "1.0.0", templates={"cm.yaml": CONFIGMAP})
OUT_OF_SYNC = "the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)"


@dataclass(frozen=True)
class Pull:
    head: str
    clone_url: str


def chart_yaml(repository: str, version: str) -> str:
    return (
        f"apiVersion: v2\nname: app\nversion: {version}\n"
        f"dependencies:\n  - name: lib\n    version: 1.0.0\n    repository: {repository}\n"
    )


def open_pull(tmp_path: Path, github: FakeGitHub, repository: str, lock: str | None = None) -> Pull:
    """develop has charts/app depending on lib 1.0.0 from `repository`; PR #1 bumps the chart,
    and adds `lock` as its Chart.lock."""
    g = GitBuilder(tmp_path / "platform")
    g.write("charts/app/Chart.yaml", chart_yaml(repository, "1.0.0"))
    base = g.write("charts/app/values.yaml", "{}\n").commit("app").sha()
    g.branch("bump").write("charts/app/Chart.yaml", chart_yaml(repository, "1.0.1"))
    if lock is not None:
        g.write("charts/app/Chart.lock", lock)
    head = g.commit("bump").sha()
    g.pull_ref(1, "bump").checkout("develop")
    clone_url = str(g.path)
    github.add_repo(REPO, default_branch="develop", clone_url=clone_url, branches={"develop": base})
    github.add_pull(
        REPO, number=1, head_sha=head, base_sha=base, head_ref="bump", base_ref="develop"
    )
    return Pull(head, clone_url)


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def reviewed(app: RunningApp, github: FakeGitHub, pull: Pull, delivery: str) -> None:
    payload = pull_request_event("opened", REPO, pull.clone_url, 1, pull.head)
    assert app.deliver("pull_request", payload, delivery=delivery).status_code == 202
    summary = lambda: [c for c in github.issue_comments(REPO, 1) if pull.head[:12] in c.body]  # noqa: E731
    wait_for(lambda: summary() and app.idle(), what="the review published")


def not_reviewed_count(app: RunningApp) -> float:
    text = httpx.get(f"{app.url}/metrics", timeout=5).text
    (line,) = [
        r for r in text.splitlines() if r.startswith("chart_review_charts_not_reviewed_total ")
    ]
    return float(line.split()[-1])


def refusal(json_logs: JsonLogs, delivery: str) -> str:
    (line,) = [
        line
        for line in json_logs.about(delivery)
        if line["message"].startswith("chart charts/app not reviewed: ")
    ]
    assert (line["level"], line["repo"], line["pr"]) == ("WARNING", REPO, 1)
    return str(line["message"])


def test_an_archive_that_does_not_match_the_index_is_refused_and_said(
    app: RunningApp,
    github: FakeGitHub,
    chart_repo: ChartRepo,
    tmp_path: Path,
    json_logs: JsonLogs,
) -> None:
    (archive,) = chart_repo.add(LIB)
    archive.write_bytes(archive.read_bytes() + b"\0" * 512)  # not the archive the index pins
    served = "sha256:" + hashlib.sha256(archive.read_bytes()).hexdigest()
    pull = open_pull(tmp_path, github, chart_repo.url)

    reviewed(app, github, pull, delivery="tampered")

    why = f"the archive's sha256 is {served}, the index says "
    assert why in refusal(json_logs, "tampered")
    assert not_reviewed_count(app) == 1
    runs = github.check_runs(REPO, pull.head)
    # Nothing could be looked at, which never reads as a pass: the run and every section neutral,
    # the reason in the rendering section, the chart named in the summary.
    assert set(family_verdicts(runs).values()) == {"neutral"}
    assert why in family(runs, "render").text
    (summary,) = github.issue_comments(REPO, 1)
    assert "not reviewed: charts/app" in summary.body


def test_a_chart_lock_whose_digest_does_not_match_fails_and_is_said(
    app: RunningApp,
    github: FakeGitHub,
    chart_repo: ChartRepo,
    tmp_path: Path,
    json_logs: JsonLogs,
) -> None:
    chart_repo.add(LIB)
    lock = (
        f"dependencies:\n- name: lib\n  repository: {chart_repo.url}\n  version: 1.0.0\n"
        f'digest: sha256:{"0" * 64}\ngenerated: "2026-01-01T00:00:00Z"\n'
    )
    pull = open_pull(tmp_path, github, chart_repo.url, lock=lock)

    reviewed(app, github, pull, delivery="hand-made-lock")

    assert OUT_OF_SYNC in refusal(json_logs, "hand-made-lock")
    assert not_reviewed_count(app) == 1
    conclusions = family_verdicts(github.check_runs(REPO, pull.head))
    assert conclusions["chart-review/render"] == "failure"
    # The head stopped before it downloaded anything; the base, without a lock, fetched lib.
    assert chart_repo.paths.count("/lib-1.0.0.tgz") == 1
