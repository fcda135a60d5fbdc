"""A verified suggestion in the inline review comment: GitHub's ```suggestion block, on the lines
it replaces (start_line/line when several), and only where every one is in the PR's diff."""

from __future__ import annotations

import pytest

from bot.app.github.app import AppCredentials, GitHubApp, RepoClient
from bot.model.report import Finding, Report, Severity
from bot.model.suggestion import Suggestion, with_suggestion
from bot.report.inline import InlineComment, inline_body, inline_comments, suggestion_block
from tests.support.fakegithub import ChangedFile, FakeGitHub

REPO = "acme/charts"
HEAD, BASE = "a" * 40, "b" * 40
CHART_YAML = "charts/web/Chart.yaml"
BOTH = Suggestion(CHART_YAML, 3, 4, 'version: 1.2.0\nappVersion: "1.2.0"\n')
TAKEN = Finding(
    "version",
    Severity.FAILURE,
    "web: develop is at 1.1.0; take 1.2.0",
    "develop is at 1.1.0, so this PR's 1.0.0 → 1.1.0 bump is taken. Take 1.2.0.",
    rule="taken-by-develop",
    chart="charts/web",
    path=CHART_YAML,
    line=3,
)


def report(*findings: Finding) -> Report:
    return Report(BASE, HEAD, BASE, (), findings, ("version",))


def test_a_multi_line_suggestion_spans_its_lines_and_ends_the_body() -> None:
    f = with_suggestion(TAKEN, BOTH)
    [comment] = inline_comments(report(f), {CHART_YAML: frozenset({3, 4})}, [])
    block = '```suggestion\nversion: 1.2.0\nappVersion: "1.2.0"\n```'
    marker = "<!-- chart-review:inline version/taken-by-develop -->\n"
    body = f"{marker}{inline_body(f)}\n\n{block}"
    assert comment == InlineComment(CHART_YAML, 4, body, start_line=3)


def test_a_suggestion_reaching_a_line_outside_the_diff_is_a_plain_comment() -> None:
    f = with_suggestion(TAKEN, BOTH)  # appVersion (line 4) is not the PR's line
    [comment] = inline_comments(report(f), {CHART_YAML: frozenset({3})}, [])
    marker = "<!-- chart-review:inline version/taken-by-develop -->\n"
    assert comment == InlineComment(CHART_YAML, 3, marker + inline_body(f))


def test_a_deleting_suggestion_is_an_empty_block_on_one_line() -> None:
    f = with_suggestion(TAKEN, Suggestion(CHART_YAML, 3, 3, ""))
    [comment] = inline_comments(report(f), {CHART_YAML: frozenset({3})}, [])
    assert (comment.line, comment.start_line) == (3, None)
    assert comment.body.endswith("\n\n```suggestion\n```")


def test_backticks_in_the_replacement_cannot_close_the_fence() -> None:
    s = Suggestion(CHART_YAML, 3, 3, "description: ```` code ````\n")
    assert suggestion_block(s) == "`````suggestion\ndescription: ```` code ````\n`````"


@pytest.fixture
def repo(github: FakeGitHub) -> RepoClient:
    github.add_repo(REPO, clone_url="/srv/git/charts.git")
    creds = AppCredentials(github.app_id, github.app_private_key, github.url, 0.0, 0.0)
    return GitHubApp(creds).repo(REPO, 1)


def test_the_suggestion_reaches_github_in_the_review_comment(
    repo: RepoClient, github: FakeGitHub
) -> None:
    patch = "@@ -1,3 +1,3 @@\n apiVersion: v2\n name: web\n-version: 1.0.0\n+version: 1.1.0"
    github.add_pull(
        REPO, head_sha=HEAD, base_sha=BASE, files=[ChangedFile(CHART_YAML, patch=patch)]
    )
    f = with_suggestion(TAKEN, Suggestion(CHART_YAML, 3, 3, "version: 1.2.0\n"))
    comments = inline_comments(report(f), {CHART_YAML: frozenset({3})}, [])
    repo.post_review(1, HEAD, comments, "chart-review: 1 failure")
    [stored] = github.review_comments(REPO, 1)
    assert (stored.path, stored.line, stored.side) == (CHART_YAML, 3, "RIGHT")
    assert stored.body.endswith("\n\n```suggestion\nversion: 1.2.0\n```")
    # Posted once: the re-run finds it and sends nothing again.
    assert (
        inline_comments(report(f), {CHART_YAML: frozenset({3})}, repo.bot_review_comments(1)) == []
    )


def test_a_multi_line_suggestion_reaches_github_with_its_range(
    repo: RepoClient, github: FakeGitHub
) -> None:
    patch = (
        "@@ -1,4 +1,4 @@\n apiVersion: v2\n name: web\n-version: 1.0.0\n-appVersion: 1.0.0\n"
        "+version: 1.1.0\n+appVersion: 1.1.0"
    )
    github.add_pull(
        REPO, head_sha=HEAD, base_sha=BASE, files=[ChangedFile(CHART_YAML, patch=patch)]
    )
    both = "version: 1.2.0\nappVersion: 1.2.0\n"
    f = with_suggestion(TAKEN, Suggestion(CHART_YAML, 3, 4, both))
    comments = inline_comments(report(f), {CHART_YAML: frozenset({3, 4})}, [])
    repo.post_review(1, HEAD, comments, "chart-review: 1 failure")
    [stored] = github.review_comments(REPO, 1)
    # The range GitHub replaces when the suggestion is committed: lines 3 to 4 of the head.
    assert (stored.path, stored.start_line, stored.line, stored.side) == (CHART_YAML, 3, 4, "RIGHT")
    assert stored.body.endswith(f"\n\n```suggestion\n{both}```")
