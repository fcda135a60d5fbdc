"""The fake GitHub, exercised the way the bot will: real PyGithub over real HTTP."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import github
import httpx
import pytest
from starlette.routing import Match

from tests.support.fakegithub import NO_THROTTLE, ChangedFile, FakeGitHub, make_app_key
from tests.support.fakegithub.openapi_check import response_problem, spec_document
from tests.support.fakegithub.server import build_app
from tests.support.fakegithub.state import GitHubState, now

REPO = "acme/charts"
HEAD, BASE, DEVELOP_HEAD = "a" * 40, "b" * 40, "c" * 40


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGitHub]:
    with FakeGitHub() as running:
        yield running


@pytest.fixture
def fake(server: FakeGitHub) -> Iterator[FakeGitHub]:
    server.reset()
    server.add_repo(REPO, branches={"main": BASE, "develop": DEVELOP_HEAD})
    yield server
    server.assert_no_violations()


def client(fake: FakeGitHub, **options: object) -> github.Github:
    return github.Github(
        base_url=fake.url, auth=github.Auth.Token(fake.issue_token()), **NO_THROTTLE, **options
    )


def raw(fake: FakeGitHub) -> httpx.Client:
    """Plain HTTP, for what PyGithub hides (status codes) or would never send."""
    headers = {"Authorization": f"token {fake.issue_token()}"}
    return httpx.Client(base_url=fake.url, headers=headers)


def annotations(count: int, title: str = "QoS changed") -> list[dict[str, object]]:
    note = {"path": "charts/web/values.yaml", "start_line": 3, "end_line": 3}
    return [{**note, "annotation_level": "warning", "message": "m", "title": title}] * count


def test_app_jwt_to_installation_token_then_list_prs(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, base_ref="develop", title="bump web")
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, base_ref="main", title="other")
    app_auth = github.Auth.AppAuth(fake.app_id, fake.app_private_key)
    integration = github.GithubIntegration(auth=app_auth, base_url=fake.url, **NO_THROTTLE)

    token = integration.get_access_token(1)
    gh = github.Github(base_url=fake.url, auth=github.Auth.Token(token.token), **NO_THROTTLE)
    pulls = list(gh.get_repo(REPO).get_pulls(state="open", base="develop"))

    assert token.expires_at > now() + timedelta(minutes=59)
    assert [(p.number, p.title, p.head.sha, p.base.ref) for p in pulls] == [
        (1, "bump web", HEAD, "develop")
    ]
    assert [(r.method, r.path, r.status) for r in fake.calls()] == [
        ("POST", "/app/installations/1/access_tokens", 201),
        ("GET", f"/repos/{REPO}", 200),
        ("GET", f"/repos/{REPO}/pulls", 200),
    ]
    assert fake.calls("GET", "/pulls$")[0].query == {"state": "open", "base": "develop"}


def test_installation_auth_refreshes_through_pygithub(fake: FakeGitHub) -> None:
    app_auth = github.Auth.AppAuth(fake.app_id, fake.app_private_key)
    gh = github.Github(base_url=fake.url, auth=app_auth.get_installation_auth(1), **NO_THROTTLE)
    assert gh.get_repo(REPO).default_branch == "main"


@pytest.mark.parametrize("app_id, key", [(4242, make_app_key()), (999, None)])
def test_bad_jwt_is_refused(fake: FakeGitHub, app_id: int, key: str | None) -> None:
    auth = github.Auth.AppAuth(app_id, key or fake.app_private_key)
    integration = github.GithubIntegration(auth=auth, base_url=fake.url, **NO_THROTTLE)
    with pytest.raises(github.GithubException) as refused:
        integration.get_access_token(1)
    assert refused.value.status == 401


def test_expired_token_is_refused(fake: FakeGitHub) -> None:
    fake.token_lifetime = timedelta(minutes=5)
    token = github.GithubIntegration(
        auth=github.Auth.AppAuth(fake.app_id, fake.app_private_key),
        base_url=fake.url,
        **NO_THROTTLE,
    ).get_access_token(1)
    auth = github.Auth.Token(token.token)
    gh = github.Github(base_url=fake.url, auth=auth, retry=None, **NO_THROTTLE)
    assert gh.get_repo(REPO).id
    assert token.expires_at < now() + timedelta(minutes=6)

    fake.expire_tokens()
    with pytest.raises(github.BadCredentialsException):
        gh.get_repo(REPO)
    assert fake.calls()[-1].status == 401


def test_token_reaches_only_its_installation(fake: FakeGitHub) -> None:
    fake.add_repo("other/private", installation_id=2, private=True)
    with raw(fake) as http:
        assert http.get("/repos/other/private").status_code == 404
        assert http.get(f"/repos/{REPO}").status_code == 200
        assert http.get(f"/repos/{REPO}", headers={"Authorization": ""}).status_code == 401


def test_check_run_annotations_50_per_request(fake: FakeGitHub) -> None:
    repo = client(fake, retry=None).get_repo(REPO)
    run = repo.create_check_run(
        name="chart-review/qos",
        head_sha=HEAD,
        status="in_progress",
        output={"title": "QoS", "summary": "running"},
    )

    with pytest.raises(github.GithubException) as refused:
        run.edit(output={"title": "QoS", "summary": "s", "annotations": annotations(51)})
    assert refused.value.status == 422
    assert "output/annotations" in fake.take_violations()[0]

    for _ in range(2):
        run.edit(output={"title": "QoS", "summary": "s", "annotations": annotations(50)})
    run.edit(conclusion="failure", output={"title": "QoS", "summary": "2 changes"})

    stored = fake.check_runs(REPO, HEAD)[0]
    assert (stored.status, stored.conclusion, stored.summary) == (
        "completed",
        "failure",
        "2 changes",
    )
    assert len(stored.annotations) == 100
    assert run.output.annotations_count == 100
    assert len(list(run.get_annotations())) == 100
    listed = list(repo.get_commit(HEAD).get_check_runs(check_name="chart-review/qos"))
    assert [r.id for r in listed] == [run.id]


def test_prose_only_check_run_limits_answer_422(fake: FakeGitHub) -> None:
    with raw(fake) as http:
        url = f"/repos/{REPO}/check-runs"
        long_title = annotations(1, title="t" * 256)
        output = {"title": "QoS", "summary": "s", "annotations": long_title}
        response = http.post(url, json={"name": "q", "head_sha": HEAD, "output": output})
        completed = http.post(url, json={"name": "q", "head_sha": HEAD, "status": "completed"})
    assert (response.status_code, completed.status_code) == (422, 422)
    found = fake.take_violations()
    assert "annotations[0].title is longer than 255" in found[0]
    assert "conclusion is required when status is completed" in found[1]


def test_review_with_comment_event(fake: FakeGitHub) -> None:
    patch = "@@ -1,2 +1,3 @@\n a\n+b\n c"
    files = [ChangedFile("charts/web/values.yaml", additions=1, patch=patch)]
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, files=files)
    pr = client(fake, retry=None).get_repo(REPO).get_pull(1)
    inline = {"path": "charts/web/values.yaml", "line": 2, "side": "RIGHT", "body": "QoS drops"}

    review = pr.create_review(body="2 findings", event="COMMENT", comments=[inline])

    assert (review.state, review.commit_id, review.user.login) == (
        "COMMENTED",
        HEAD,
        fake.bot_login,
    )
    [stored] = fake.review_comments(REPO, 1)
    assert (stored.path, stored.line, stored.side, stored.commit_id) == (
        "charts/web/values.yaml",
        2,
        "RIGHT",
        HEAD,
    )
    assert [c.body for c in pr.get_review_comments()] == ["QoS drops"]


def test_review_needs_body_and_lines_in_the_diff(fake: FakeGitHub) -> None:
    files = [ChangedFile("values.yaml", patch="@@ -10,2 +10,2 @@\n-a\n+b\n c")]
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, files=files)
    pr = client(fake, retry=None).get_repo(REPO).get_pull(1)
    outside = {"path": "values.yaml", "line": 40, "side": "RIGHT", "body": "x"}

    for kwargs in ({"event": "COMMENT"}, {"body": "b", "event": "COMMENT", "comments": [outside]}):
        with pytest.raises(github.GithubException) as refused:
            pr.create_review(**kwargs)
        assert refused.value.status == 422

    found = fake.take_violations()
    assert "body is required when event is COMMENT" in found[0]
    assert "line 40 (RIGHT) must be part of the diff" in found[1]
    assert fake.reviews(REPO, 1) == []


def test_issue_comment_create_edit_and_react(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE)
    pr = client(fake).get_repo(REPO).get_pull(1)

    comment = pr.create_issue_comment("<!-- chart-review -->\nrunning")
    comment.edit("<!-- chart-review -->\n2 findings")
    comment.create_reaction("rocket")

    assert (comment.user.login, comment.user.type) == ("chart-review[bot]", "Bot")
    [stored] = fake.issue_comments(REPO, 1)
    assert stored.body == "<!-- chart-review -->\n2 findings"
    assert [r.content for r in fake.reactions(stored.id)] == ["rocket"]
    with raw(fake) as http:
        again = http.post(
            f"/repos/{REPO}/issues/comments/{stored.id}/reactions", json={"content": "rocket"}
        )
    assert again.status_code == 200
    assert len(fake.reactions(stored.id)) == 1


def test_collaborator_permission(fake: FakeGitHub) -> None:
    fake.set_permission(REPO, "release-manager", "maintain")
    repo = client(fake).get_repo(REPO)

    assert repo.get_collaborator_permission("release-manager") == "write"
    assert repo.get_collaborator_role_name("release-manager") == "maintain"
    assert repo.get_collaborator_permission("passer-by") == "read"  # public repository
    assert repo.has_in_collaborators("release-manager")
    assert not repo.has_in_collaborators("passer-by")


def test_pagination_walks_250_comments(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE)
    for index in range(250):
        fake.add_issue_comment(REPO, 1, f"comment {index}")
    pr = client(fake, per_page=100).get_repo(REPO).get_pull(1)

    bodies = [c.body for c in pr.get_issue_comments()]

    assert bodies == [f"comment {index}" for index in range(250)]
    pages = [r.query.get("page", "1") for r in fake.calls("GET", "/issues/1/comments$")]
    assert pages == ["1", "2", "3"]


def test_per_page_above_100_is_refused(fake: FakeGitHub) -> None:
    with raw(fake) as http:
        response = http.get(f"/repos/{REPO}/pulls", params={"per_page": 101})
    assert response.status_code == 422
    assert fake.take_violations() == [
        f"GET /repos/{REPO}/pulls: per_page 101 is above the maximum of 100"
    ]


@pytest.mark.parametrize(
    "method, path, body, status, expected",
    [
        ("POST", f"/repos/{REPO}/check-runs", {"name": "q"}, 422, "'head_sha' is a required"),
        (
            "POST",
            f"/repos/{REPO}/check-runs",
            {"name": "q", "head_sha": HEAD, "conclusion": "passed"},
            422,
            "'passed' is not one of",
        ),
        ("GET", f"/repos/{REPO}/pulls?state=merged", None, 422, "query parameter: state"),
        ("GET", f"/repos/{REPO}/hooks", None, 404, "not in the REST description"),
        ("DELETE", f"/repos/{REPO}/pulls", None, 404, "not in the REST description"),
    ],
)
def test_off_spec_requests_are_violations(
    fake: FakeGitHub, method: str, path: str, body: object, status: int, expected: str
) -> None:
    with raw(fake) as http:
        response = http.request(method, path, json=body)
    assert response.status_code == status
    [violation] = fake.take_violations()
    assert violation.startswith(f"{method} {path.split('?')[0]}")
    assert expected in violation
    assert fake.check_runs(REPO) == []


def test_fault_injection_502_once_then_success(fake: FakeGitHub) -> None:
    fake.inject("GET", r"/pulls$", 502)
    gh = client(fake, retry=None)
    with pytest.raises(github.GithubException) as failed:
        list(gh.get_repo(REPO).get_pulls())
    assert failed.value.status == 502
    assert list(gh.get_repo(REPO).get_pulls()) == []
    assert [r.status for r in fake.calls("GET", "/pulls$")] == [502, 200]


def test_fault_injection_secondary_rate_limit(fake: FakeGitHub) -> None:
    message = {"message": "You have exceeded a secondary rate limit."}
    fake.inject("POST", "/check-runs$", 403, headers={"Retry-After": "1"}, body=message)
    fake.inject("GET", f"/repos/{REPO}$", 429, times=2)
    with raw(fake) as http:
        limited = http.post(f"/repos/{REPO}/check-runs", json={"name": "q", "head_sha": HEAD})
        statuses = [http.get(f"/repos/{REPO}").status_code for _ in range(3)]
    assert (limited.status_code, limited.headers["retry-after"]) == (403, "1")
    assert limited.json() == message
    assert statuses == [429, 429, 200]


def test_release_board_issue(fake: FakeGitHub) -> None:
    repo = client(fake).get_repo(REPO)
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE)
    board = repo.create_issue("Chart version board", body="empty", labels=["chart-review"])

    [found] = repo.get_issues(state="open", labels=["chart-review"])
    found.edit(body="| chart | version |")

    assert (found.number, found.title, found.user.login) == (
        2,
        "Chart version board",
        fake.bot_login,
    )
    assert repo.get_issue(board.number).body == "| chart | version |"
    assert [i.body for i in fake.issues(REPO)] == ["| chart | version |"]
    assert len(list(repo.get_issues(state="all"))) == 2  # the PR is an issue too


def test_refs_branches_and_contents_with_slashes(fake: FakeGitHub) -> None:
    fake.set_branch(REPO, "feat/web", HEAD)
    fake.set_file(REPO, ".github/chart-review.yml", "profiles: []\n", ref="feat/web")
    repo = client(fake).get_repo(REPO)

    assert repo.get_branch("feat/web").commit.sha == HEAD
    assert repo.get_git_ref("heads/feat/web").object.sha == HEAD
    content = repo.get_contents(".github/chart-review.yml", ref="feat/web")
    assert content.decoded_content == b"profiles: []\n"
    assert [b.name for b in repo.get_branches()] == ["develop", "feat/web", "main"]
    assert repo.compare("main", "feat/web").merge_base_commit.sha == BASE


def test_tarball_redirects_to_a_git_archive(fake: FakeGitHub, tmp_path: Path) -> None:
    work = tmp_path / "work"
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "Chart.yaml").write_text("name: web\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "chart"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    fake.add_repo("acme/web", clone_url=str(work), branches={"main": sha.strip()})

    with raw(fake) as http:
        archive = http.get("/repos/acme/web/tarball/main", follow_redirects=True)

    with tarfile.open(fileobj=io.BytesIO(archive.content)) as tar:
        assert [n for n in tar.getnames() if n.endswith("Chart.yaml")] == [
            f"acme-web-{sha[:7]}/Chart.yaml"
        ]


def test_a_request_waits_while_the_test_holds_the_state(fake: FakeGitHub) -> None:
    # The server's thread and the test's share the state under one lock, so a test that reads it
    # while the bot writes never iterates a dict that is growing.
    fake.add_issue(REPO, "board")
    http = raw(fake)  # its token is issued here, not under the lock below
    answered = threading.Event()

    def comment() -> None:
        http.post(f"/repos/{REPO}/issues/1/comments", json={"body": "hi"})
        answered.set()

    writer = threading.Thread(target=comment)
    with fake.state.lock:
        writer.start()
        assert not answered.wait(0.3), "the route ran while the test held the state"
        assert fake.issue_comments(REPO, 1) == []
    assert answered.wait(10)
    writer.join(10)
    http.close()
    assert [c.body for c in fake.issue_comments(REPO, 1)] == ["hi"]


def test_two_fakes_do_not_share_state(fake: FakeGitHub) -> None:
    with FakeGitHub() as other:
        other.add_repo(REPO)
        fake.add_issue(REPO, "only here")
        assert other.url != fake.url
        assert other.issues(REPO) == []


# Not `/app/installations`: openapi-core refuses even the description's own example there
# (the nullable anyOf `account` inside an array), so it cannot judge our body either.
SPEC_CHECKED_GETS = [
    "/app",
    "/app/installations/1",
    f"/repos/{REPO}",
    f"/repos/{REPO}/installation",
    f"/repos/{REPO}/pulls",
    f"/repos/{REPO}/pulls/1",
    f"/repos/{REPO}/pulls/1/files",
    f"/repos/{REPO}/pulls/1/commits",
    f"/repos/{REPO}/pulls/1/reviews",
    f"/repos/{REPO}/pulls/1/comments",
    f"/repos/{REPO}/issues",
    f"/repos/{REPO}/issues/1",
    f"/repos/{REPO}/issues/1/comments",
    f"/repos/{REPO}/issues/comments",
    f"/repos/{REPO}/branches",
    f"/repos/{REPO}/branches/main",
    f"/repos/{REPO}/git/ref/heads/main",
    f"/repos/{REPO}/git/matching-refs/heads/",
    f"/repos/{REPO}/commits/{HEAD}",
    f"/repos/{REPO}/commits/{HEAD}/check-runs",
    f"/repos/{REPO}/commits/{HEAD}/check-suites",
    f"/repos/{REPO}/compare/main...develop",
    f"/repos/{REPO}/contents/Chart.yaml",
    f"/repos/{REPO}/collaborators/someone/permission",
    "/rate_limit",
]


def test_responses_match_the_description(fake: FakeGitHub) -> None:
    """Our bodies satisfy GitHub's response schemas. The check run is created completed:
    openapi-core refuses `conclusion: null` under the schema's nullable enum (upstream quirk)."""
    fake.add_pull(REPO, head_sha=HEAD, base_sha=BASE, files=[ChangedFile("Chart.yaml")])
    fake.add_issue_comment(REPO, 1, "hi")
    fake.set_file(REPO, "Chart.yaml", "name: web\n")
    jwt = github.Auth.AppAuth(fake.app_id, fake.app_private_key).token
    with raw(fake) as http:
        body = {"name": "q", "head_sha": HEAD, "conclusion": "success"}
        created = http.post(f"/repos/{REPO}/check-runs", json=body)
        url = f"/repos/{REPO}/check-runs"
        problems = [response_problem("POST", url, {}, b"", 201, created.content)]
        for path in SPEC_CHECKED_GETS:
            app_only = path.startswith("/app") or path.endswith("/installation")
            headers = {"Authorization": f"Bearer {jwt}"} if app_only else {}
            response = http.get(path, headers=headers)
            assert response.status_code == 200, (path, response.text)
            problems.append(response_problem("GET", path, {}, b"", 200, response.content))
    assert [p for p in problems if p] == []


# "/" inside {path}, git {ref}s and {branch}es must route; /commits/{ref} takes a sha (the
# description cannot match a slashed ref there either).
SAMPLE_PARAMS = {
    "/commits/{ref}": f"/commits/{HEAD}",
    "/tarball/{ref}": f"/tarball/{HEAD}",
    "{basehead}": "main...feat/x",
    "{path}": "charts/web/Chart.yaml",
    "{ref}": "heads/feat/x",
    "{branch}": "feat/x",
}


def test_every_described_operation_has_a_route() -> None:
    app = build_app(GitHubState(), "http://fake", make_app_key())
    missing = []
    for template, item in spec_document()["paths"].items():
        path = template
        for name, value in SAMPLE_PARAMS.items():
            path = path.replace(name, value)
        path = re.sub(r"\{\w+\}", "7", path)
        for method in item.keys() - {"parameters"}:
            scope = {"type": "http", "path": path, "method": method.upper()}
            if not any(route.matches(scope)[0] == Match.FULL for route in app.routes):
                missing.append(f"{method.upper()} {template}")
    assert missing == []
