"""The PyGithub adapter against the fake GitHub, over real HTTP."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.app.github.app import AppCredentials, GitHubApp, PullState, RepoClient, RepoInfo
from bot.model.report import Finding, Report, Severity
from bot.report.bodies import SUMMARY_MARKER, Annotation, CheckRunOutput, failed_output
from bot.report.inline import InlineComment, inline_comments
from tests.support.fakegithub import ChangedFile, FakeGitHub

REPO = "acme/charts"
HEAD, BASE, OTHER = "a" * 40, "b" * 40, "d" * 40
QOS, VERSION = "chart-review/qos", "chart-review/version"
VALUES = "charts/web/values.yaml"
TOKEN_PATH = "/app/installations/1/access_tokens"


@pytest.fixture
def fake(github: FakeGitHub) -> FakeGitHub:
    github.add_repo(REPO, clone_url="/srv/git/charts.git")
    return github


@pytest.fixture
def app(fake: FakeGitHub) -> GitHubApp:
    creds = AppCredentials(fake.app_id, fake.app_private_key, fake.url, 0.0, 0.0)
    return GitHubApp(creds)


@pytest.fixture
def repo(app: GitHubApp) -> RepoClient:
    return app.repo(REPO, 1)


def output(annotations: int = 0, conclusion: str = "failure") -> CheckRunOutput:
    notes = tuple(
        Annotation(VALUES, n + 1, n + 1, Severity.WARNING, f"finding {n}", "m")
        for n in range(annotations)
    )
    return CheckRunOutput(QOS, conclusion, "1 failure", "### QoS: 1 failure", "details", notes)


# The app and its tokens


def test_private_key_stays_out_of_repr(app: GitHubApp, fake: FakeGitHub) -> None:
    creds = AppCredentials(fake.app_id, fake.app_private_key, fake.url)
    assert "PRIVATE" not in repr(creds)
    assert "PRIVATE" not in repr(app)


def test_bot_login_from_the_app_slug_asked_once(app: GitHubApp, fake: FakeGitHub) -> None:
    assert [app.bot_login(), app.bot_login()] == ["chart-review[bot]"] * 2
    assert len(fake.calls("GET", "^/app$")) == 1


def test_one_token_for_many_calls(app: GitHubApp, fake: FakeGitHub) -> None:
    app.repo(REPO, 1).info()
    app.repo(REPO, 1).open_pulls()
    assert len(fake.calls("POST", TOKEN_PATH)) == 1


def test_token_near_expiry_is_renewed(app: GitHubApp, fake: FakeGitHub) -> None:
    fake.token_lifetime = timedelta(minutes=4)  # inside the five-minute margin
    repo = app.repo(REPO, 1)
    repo.info()
    repo.open_pulls()
    assert len(fake.calls("POST", TOKEN_PATH)) == 2


def test_token_refused_with_401_is_fetched_again(repo: RepoClient, fake: FakeGitHub) -> None:
    repo.info()
    fake.expire_tokens()

    assert repo.open_pulls() == []
    assert [(r.method, r.path, r.status) for r in fake.calls()[-3:]] == [
        ("GET", f"/repos/{REPO}/pulls", 401),
        ("POST", TOKEN_PATH, 201),
        ("GET", f"/repos/{REPO}/pulls", 200),
    ]


def test_installation_id_of_a_repository(app: GitHubApp, fake: FakeGitHub) -> None:
    fake.add_repo("other/charts", installation_id=7)
    assert app.installation_id(REPO) == 1
    assert app.installation_id("other/charts") == 7
    assert app.installation_id("acme/not-installed") is None


def test_installation_ids_are_asked_once_in_a_while(app: GitHubApp, fake: FakeGitHub) -> None:
    fake.add_repo("other/charts", installation_id=7)
    for _ in range(3):
        assert app.installation_id("other/charts") == 7
        assert app.installation_id("acme/not-installed") is None  # not installed: remembered too
    assert len(fake.calls("GET", "/installation$")) == 2


def test_installation_ids_are_asked_again_after_their_time(fake: FakeGitHub) -> None:
    creds = AppCredentials(fake.app_id, fake.app_private_key, fake.url, 0.0, 0.0)
    app = GitHubApp(creds, installation_ttl=timedelta(0))
    fake.add_repo("other/charts", installation_id=7)
    assert [app.installation_id("other/charts") for _ in range(2)] == [7, 7]
    assert len(fake.calls("GET", "/installation$")) == 2


# Reading


def test_repo_info(repo: RepoClient) -> None:
    assert repo.info() == RepoInfo("main", "/srv/git/charts.git", False)


def test_pull_state_and_missing_pull(repo: RepoClient, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, body="why", draft=True, user="alice")
    assert repo.pull(1) == PullState(
        number=1,
        state="open",
        merged=False,
        draft=True,
        head_sha=HEAD,
        head_ref="feature",
        base_ref="main",
        base_sha=BASE,
        title="Update the chart",
        body="why",
        user="alice",
    )
    assert repo.pull(99) is None


def test_open_pulls_by_base_and_by_head(repo: RepoClient, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, base_ref="develop")
    fake.add_pull(REPO, head_sha=OTHER, base_sha=BASE, base_ref="main")
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, state="closed")

    assert [p.number for p in repo.open_pulls("develop")] == [1]
    assert sorted(p.number for p in repo.open_pulls()) == [1, 2]
    assert [p.number for p in repo.pulls_with_head(HEAD)] == [1]
    assert repo.pulls_with_head("e" * 40) == []


@pytest.mark.parametrize(
    "role, expected",
    [("admin", "admin"), ("maintain", "maintain"), ("write", "write"), ("triage", "triage")],
)
def test_permission_prefers_the_role_name(
    repo: RepoClient, fake: FakeGitHub, role: str, expected: str
) -> None:
    fake.set_permission(REPO, "someone", role)
    assert repo.permission("someone") == expected


def test_permission_of_reader_and_unknown(app: GitHubApp, fake: FakeGitHub) -> None:
    fake.add_repo("acme/private", private=True)
    fake.set_permission("acme/private", "reader", "read")
    private = app.repo("acme/private", 1)
    fake.inject("GET", "/collaborators/ghost/permission$", 404)

    assert private.permission("reader") == "read"
    assert private.permission("passer-by") == "none"
    assert private.permission("ghost") == "none"


# Check runs


def test_begin_creates_runs_in_progress(repo: RepoClient, fake: FakeGitHub) -> None:
    ids = repo.begin_check_runs(HEAD, [QOS, VERSION])

    runs = {r.name: r for r in fake.check_runs(REPO, HEAD)}
    assert ids == {QOS: runs[QOS].id, VERSION: runs[VERSION].id}
    assert {(r.status, r.conclusion) for r in runs.values()} == {("in_progress", None)}


def test_begin_again_on_the_same_head_reuses_the_run(repo: RepoClient, fake: FakeGitHub) -> None:
    first = repo.begin_check_runs(HEAD, [QOS, VERSION])
    repo.complete_check_run(first[QOS], output())

    again = repo.begin_check_runs(HEAD, [QOS, VERSION])
    elsewhere = repo.begin_check_runs(OTHER, [QOS])

    assert again == first
    assert elsewhere[QOS] not in first.values()
    assert len(fake.check_runs(REPO, HEAD)) == 2
    assert fake.check_runs(REPO, HEAD)[0].status == "in_progress"
    # One listing for both names on each begin, by this app's id; by name where there is one.
    listings = [c.query for c in fake.calls("GET", "/check-runs$")]
    assert listings == [
        {"app_id": str(fake.app_id), "filter": "latest", "per_page": "100", "page": "1"},
        {"app_id": str(fake.app_id), "filter": "latest", "per_page": "100", "page": "1"},
        {
            "check_name": QOS,
            "app_id": str(fake.app_id),
            "filter": "latest",
            "per_page": "100",
            "page": "1",
        },
    ]


def test_complete_sends_annotations_50_per_request(repo: RepoClient, fake: FakeGitHub) -> None:
    run_id = repo.begin_check_runs(HEAD, [QOS])[QOS]

    repo.complete_check_run(run_id, output(annotations=120))

    [run] = fake.check_runs(REPO, HEAD)
    assert (run.status, run.conclusion, run.title, run.summary, run.text) == (
        "completed",
        "failure",
        "1 failure",
        "### QoS: 1 failure",
        "details",
    )
    assert [a["title"] for a in run.annotations] == [f"finding {n}" for n in range(120)]
    patches = fake.calls("PATCH", f"/check-runs/{run_id}$")
    # Evidence first, the verdict with its last part: a crash part-way never shows a conclusion
    # with half of it, and a run of up to 50 annotations is completed in one request.
    assert [len(p.json["output"].get("annotations", [])) for p in patches] == [50, 50, 20]
    assert [p.json.get("conclusion") for p in patches] == [None, None, "failure"]


def test_completing_a_reused_run_does_not_repeat_its_annotations(
    repo: RepoClient, fake: FakeGitHub
) -> None:
    run_id = repo.begin_check_runs(HEAD, [QOS])[QOS]
    repo.complete_check_run(run_id, output(annotations=3))
    assert repo.begin_check_runs(HEAD, [QOS])[QOS] == run_id

    repo.complete_check_run(run_id, output(annotations=4))

    [run] = fake.check_runs(REPO, HEAD)
    assert [a["title"] for a in run.annotations] == [f"finding {n}" for n in range(4)]


def test_complete_with_up_to_50_annotations_is_one_request(
    repo: RepoClient, fake: FakeGitHub
) -> None:
    run_id = repo.begin_check_runs(HEAD, [QOS])[QOS]
    repo.complete_check_run(run_id, output(annotations=50))

    [patch] = fake.calls("PATCH", f"/check-runs/{run_id}$")
    assert (patch.json["conclusion"], len(patch.json["output"]["annotations"])) == ("failure", 50)


def test_begin_lists_the_runs_there_once_whatever_the_number_of_names(
    repo: RepoClient, fake: FakeGitHub
) -> None:
    """The `per-check` layout's eight runs, begun again on the same head: one listing (paged past
    GitHub's 100 a page), then one write per run."""
    names = [f"chart-review/check{n}" for n in range(8)]
    other = [f"other/{n}" for n in range(120)]  # this app's runs too, which page the listing
    repo.begin_check_runs(HEAD, other)
    first = repo.begin_check_runs(HEAD, names)
    calls = len(fake.calls())

    again = repo.begin_check_runs(HEAD, names)

    assert again == first
    made = fake.calls()[calls:]
    assert [(c.method, c.query.get("page")) for c in made if c.method == "GET"] == [
        ("GET", "1"),
        ("GET", "2"),
    ]
    assert [c.method for c in made if c.method != "GET"] == ["PATCH"] * 8


def test_complete_without_annotations_is_one_request(repo: RepoClient, fake: FakeGitHub) -> None:
    run_id = repo.begin_check_runs(HEAD, [QOS])[QOS]
    repo.complete_check_run(run_id, failed_output(QOS, "helm crashed"))

    [run] = fake.check_runs(REPO, HEAD)
    assert (run.conclusion, run.summary, run.annotations) == (
        "neutral",
        "could not complete: helm crashed; will retry on the next event",
        [],
    )
    assert len(fake.calls("PATCH", "/check-runs/")) == 1


# Conversation


def test_summary_comment_is_edited_in_place(repo: RepoClient, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE)
    quoted = fake.add_issue_comment(REPO, 1, f"look: {SUMMARY_MARKER}", user="alice")

    first = repo.upsert_summary_comment(1, f"{SUMMARY_MARKER}\nrunning")
    second = repo.upsert_summary_comment(1, f"{SUMMARY_MARKER}\n2 findings")

    assert first == second
    assert [(c.id, c.user, c.body) for c in fake.issue_comments(REPO, 1)] == [
        (quoted.id, "alice", f"look: {SUMMARY_MARKER}"),
        (first, "chart-review[bot]", f"{SUMMARY_MARKER}\n2 findings"),
    ]


def test_reply_and_react(repo: RepoClient, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE)
    command = fake.add_issue_comment(REPO, 1, "/chart-review", user="alice")

    repo.react(command.id)
    repo.react(command.id)  # GitHub answers 200 for a reaction already there
    repo.reply(1, "Only users with write access can run chart-review.")

    assert [r.content for r in fake.reactions(command.id)] == ["eyes"]
    assert [c.body for c in fake.issue_comments(REPO, 1)][-1].startswith("Only users")


def _report(*findings: Finding) -> Report:
    return Report(BASE, HEAD, BASE, (), findings, ("qos",))


def test_review_round_trip_never_repeats_a_comment(repo: RepoClient, fake: FakeGitHub) -> None:
    patch = "@@ -1,2 +1,4 @@\n a\n+b\n+c\n d"
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, files=[ChangedFile(VALUES, patch=patch)])
    fake.add_pull(REPO, head_sha=OTHER, base_sha=BASE)
    findings = [
        Finding("qos", Severity.FAILURE, f"QoS drops on line {n}", "m", path=VALUES, line=n)
        for n in (2, 3)
    ]
    changed = {VALUES: frozenset({2, 3})}
    comments = inline_comments(_report(*findings), changed, repo.bot_review_comments(1))

    repo.post_review(1, HEAD, comments, "chart-review: 2 failures")
    again = inline_comments(_report(*findings), changed, repo.bot_review_comments(1))
    repo.post_review(1, HEAD, again, "chart-review: 2 failures")

    assert again == []
    assert [(c.path, c.line, c.body) for c in repo.bot_review_comments(1)] == [
        (c.path, c.line, c.body) for c in comments
    ]
    assert repo.bot_review_comments(2) == []
    [review] = fake.reviews(REPO, 1)
    assert (review.state, review.commit_id, review.body) == (
        "COMMENTED",
        HEAD,
        "chart-review: 2 failures",
    )
    stored = fake.review_comments(REPO, 1)
    assert [(c.line, c.side, c.commit_id) for c in stored] == [
        (2, "RIGHT", HEAD),
        (3, "RIGHT", HEAD),
    ]


def test_review_comments_of_others_are_not_the_bots(repo: RepoClient, fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, files=[ChangedFile(VALUES)])
    repo.post_review(1, HEAD, [InlineComment(VALUES, 3, "mine")], "chart-review")
    fake.review_comments(REPO, 1)[0].user = "alice"
    assert repo.bot_review_comments(1) == []


# The release board


def test_board_issue_is_upserted(repo: RepoClient, fake: FakeGitHub) -> None:
    human = fake.add_issue(REPO, "Chart version board", body="by hand")

    first = repo.upsert_issue("Chart version board", "| chart | version |")
    second = repo.upsert_issue("Chart version board", "| chart | version |\n| web | 1.0.1 |")

    assert first == second != human.number
    assert [(i.user, i.body) for i in fake.issues(REPO)] == [
        ("maintainer", "by hand"),
        ("chart-review[bot]", "| chart | version |\n| web | 1.0.1 |"),
    ]
