"""No cross-repository leak: what a review may read in another repository that a PR names.

The rule first, as a pure function over every combination; then end to end through the App, where
the attack comes in: a public PR naming a private repository of another installation learns
nothing about it, not even whether it exists."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app.link_policy import Home, Visibility, unreadable_reason
from bot.model.config import LinksConfig
from bot.model.context import LinkedRepo
from bot.model.links import NOT_READABLE, TOO_MANY, bounded
from tests.support.app_harness import (
    RunningApp,
    app_settings,
    pull_request_event,
    running_app,
    wait_for,
)
from tests.support.app_scenario import REPO, RUNS, Scenario
from tests.support.check_runs import family
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

HOME_INSTALLATION = 1
ELSEWHERE = 2
NOWHERE = None  # the App is not installed there
AUTHOR = "contributor"  # PR #1's author in the scenario

# The rule, row by row: (PR repository private, other repository as the PR's installation sees it
# — None when it cannot see it — , readable, whether that turns on the author's permission).
VISIBILITY_RULE = [
    (False, None, False, False),  # missing, or private to another owner: GitHub says 404 to both
    (True, None, False, False),
    (False, Visibility(False, NOWHERE), True, False),  # public: anyone may see what it says
    (True, Visibility(False, NOWHERE), True, False),
    (False, Visibility(False, HOME_INSTALLATION), True, False),
    (True, Visibility(False, HOME_INSTALLATION), True, False),
    (False, Visibility(False, ELSEWHERE), True, False),
    (True, Visibility(False, ELSEWHERE), True, False),
    (False, Visibility(True, HOME_INSTALLATION), False, False),  # a public PR never shows a private
    (
        True,
        Visibility(True, HOME_INSTALLATION),
        True,
        True,
    ),  # private to private: if the author reads it
    (False, Visibility(True, ELSEWHERE), False, False),
    (True, Visibility(True, ELSEWHERE), False, False),  # another owner's grant is not this one's
    (False, Visibility(True, NOWHERE), False, False),
    (True, Visibility(True, NOWHERE), False, False),
]


def _reason(
    home: Home, other: Visibility | None, config: LinksConfig, reads: bool, asked: list[str]
) -> str | None:
    def author_reads() -> bool:
        asked.append(home.author)
        return reads

    return unreadable_reason("acme/other", home, HOME_INSTALLATION, other, config, author_reads)


@pytest.mark.parametrize(("home_private", "other", "readable", "by_author"), VISIBILITY_RULE)
@pytest.mark.parametrize("author_reads", [True, False])
def test_the_visibility_rule(
    home_private: bool,
    other: Visibility | None,
    readable: bool,
    by_author: bool,
    author_reads: bool,
) -> None:
    asked: list[str] = []
    reason = _reason(Home(REPO, home_private, AUTHOR), other, LinksConfig(), author_reads, asked)
    assert reason == (
        None
        if readable and (author_reads or not by_author)
        else "not checked: acme/other is not readable for this repository"
    )
    assert asked == ([AUTHOR] if by_author else [])  # asked only where the answer decides


@pytest.mark.parametrize(("home_private", "other", "readable", "by_author"), VISIBILITY_RULE)
@pytest.mark.parametrize(
    ("allowed", "listed"),
    [
        (["acme/other"], True),
        (["ACME/Other"], True),
        (["acme/*"], True),
        (["acme/others", "tools/*"], False),
        ([], False),
    ],
)
def test_the_allow_list_only_narrows(
    home_private: bool,
    other: Visibility | None,
    readable: bool,
    by_author: bool,
    allowed: list[str],
    listed: bool,
) -> None:
    asked: list[str] = []
    config = LinksConfig(repositories=allowed)
    reason = _reason(Home(REPO, home_private, AUTHOR), other, config, False, asked)
    # Listing a private repository never stands in for its author's permission.
    assert (reason is None) == (readable and listed and not by_author)
    assert asked == ([AUTHOR] if by_author and listed else [])


def test_a_private_repository_is_not_read_for_an_unknown_author() -> None:
    asked: list[str] = []
    other = Visibility(True, HOME_INSTALLATION)
    reason = _reason(Home(REPO, True, ""), other, LinksConfig(), True, asked)
    assert reason == "not checked: acme/other is not readable for this repository"
    assert asked == []


@pytest.mark.parametrize("name", [REPO, "ACME/Charts"])
def test_the_prs_own_private_repository_is_read_without_asking(name: str) -> None:
    asked: list[str] = []

    def author_reads() -> bool:
        asked.append(AUTHOR)
        return False

    home = Home(REPO, True, AUTHOR)
    other = Visibility(True, HOME_INSTALLATION)
    assert unreadable_reason(name, home, 1, other, LinksConfig(), author_reads) is None
    assert asked == []


def test_bounded_asks_for_the_first_allowed_repositories_only() -> None:
    asked: list[str] = []

    def resolver(name: str) -> LinkedRepo:
        asked.append(name)
        return LinkedRepo(name, reason="asked")

    resolve = bounded(resolver, LinksConfig(repositories=["acme/*"], max_repositories=2))
    answers = [resolve(n).reason for n in ("other/x", "acme/a", "Acme/A", "acme/b", "acme/c")]
    assert asked == ["acme/a", "acme/b"]  # the same repository in another case is not another one
    assert answers == [
        NOT_READABLE.format(name="other/x"),
        "asked",
        "asked",
        "asked",
        TOO_MANY.format(limit=2),
    ]


# End to end: the App reviewing acme/charts#1 (installation 1), whose values.yaml now quotes
# headings of another repository. Every way the headings check could tell about that repository
# if it read it: the closest headings, the files that share a name, the PR that holds a heading.
CANARY = "CANARY OF THE SECRET REPO"  # a heading the PR nearly quotes (REPP)
OTHER_FILE = "ops/jobs.yaml"  # a second jobs.yaml, listed when `jobs.yaml` is ambiguous
OTHER_PR = 77  # its open PR, the only place ONLY ON THE OPEN PR exists


def _quotes(name: str) -> str:
    return (
        f"# Mirrors CANARY OF THE SECRET REPP in {name}:deploy/jobs.yaml.\n"
        f"# Mirrors ROLLBACK ON THE DEGRADED PATH in {name}:jobs.yaml.\n"
        f"# Mirrors ONLY ON THE OPEN PR in {name}:deploy/jobs.yaml.\n"
    )


def _other_repo(
    tmp_path: Path, github: FakeGitHub, name: str, *, installation_id: int, private: bool
) -> None:
    git = GitBuilder(tmp_path / name.replace("/", "-"))
    jobs = f"# ROLLBACK ON THE DEGRADED PATH — on purpose.\n# {CANARY}\nreplicas: 1\n"
    git.write("deploy/jobs.yaml", jobs)
    base = (
        git.write(OTHER_FILE, "# ROLLBACK ON THE DEGRADED PATH — here too.\n").commit("jobs").sha()
    )
    git.branch("open-pr").write("deploy/jobs.yaml", jobs + "# ONLY ON THE OPEN PR\n")
    head = git.commit("Only on the open PR").sha()
    git.pull_ref(OTHER_PR, "open-pr").checkout("develop")
    github.add_repo(
        name,
        installation_id=installation_id,
        private=private,
        default_branch="develop",
        clone_url=str(git.path),
        branches={"develop": base},
    )
    github.add_pull(
        name, number=OTHER_PR, head_sha=head, base_sha=base, head_ref="open-pr", base_ref="develop"
    )


@pytest.fixture
def app(tmp_path: Path, github: FakeGitHub) -> Iterator[RunningApp]:
    with running_app(app_settings(github, tmp_path / "data")) as running:
        yield running


def _make_private(github: FakeGitHub, repo: str) -> None:
    with github.state.lock:
        github.state.repos[repo].private = True


def _set_config(github: FakeGitHub, s: Scenario, text: str) -> None:
    """The config on develop, where the review reads it (the PR's base)."""
    sha = s.git.checkout("develop").write(".github/chart-review.yml", text).commit("config").sha()
    github.set_branch(REPO, "develop", sha)


def _review(app: RunningApp, github: FakeGitHub, s: Scenario, quotes: str) -> str:
    """PR #1 with `quotes` on top of client/values.yaml, reviewed; the head."""
    git = s.git.checkout("wait-for-mysql")
    values = (git.path / "client/values.yaml").read_text()
    head = git.write("client/values.yaml", quotes + values).commit("Quote others").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    with github.state.lock:
        github.update_pull(github.state.pulls[(REPO, 1)], head_sha=head)
    payload = pull_request_event("synchronize", REPO, s.clone_url, 1, head)
    assert app.deliver("pull_request", payload).status_code == 202

    def reviewed() -> bool:
        runs = github.check_runs(REPO, head)
        summary = [c for c in github.issue_comments(REPO, 1) if "chart-review:summary" in c.body]
        done = len(runs) >= len(RUNS) and all(r.status == "completed" for r in runs)
        return done and any(head[:12] in c.body for c in summary)

    wait_for(reviewed, what="the review published")
    return head


def _headings(github: FakeGitHub, head: str) -> str:
    run = family(github.check_runs(REPO, head), "headings")
    return f"{run.title}\n{run.summary}\n{run.text}"


def _everything_published(github: FakeGitHub, head: str) -> str:
    """Every word the App wrote on acme/charts: check runs and their annotations, the summary
    comment, reviews and their inline comments."""
    parts: list[str] = []
    for run in github.check_runs(REPO, head):
        parts += [run.title or "", run.summary or "", run.text or "", repr(run.annotations)]
    parts += [c.body for c in github.issue_comments(REPO, 1)]
    parts += [r.body for r in github.reviews(REPO, 1)]
    parts += [c.body for c in github.review_comments(REPO, 1)]
    return "\n".join(parts)


def _minted_for(github: FakeGitHub) -> set[int]:
    """The installations the App asked GitHub for a token of."""
    found = github.calls("POST", r"^/app/installations/\d+/access_tokens$")
    return {int(c.path.split("/")[3]) for c in found}


def test_a_public_pr_learns_nothing_about_a_private_repository_of_another_installation(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _other_repo(tmp_path, github, "other/secret", installation_id=ELSEWHERE, private=True)

    head = _review(app, github, scenario, _quotes("other/secret"))

    sentence = "not checked: other/secret is not readable for this repository"
    text = _headings(github, head)
    assert text.count(f": {sentence}.") >= 3  # each of the three quotes says that
    published = _everything_published(github, head)
    for detail in (CANARY, OTHER_FILE, f"#{OTHER_PR}", "(404)", "(not found)", "GitHub answered"):
        assert detail not in published
    # One look-up with the PR's own token, answered 404 as for a repository that does not exist;
    # never its contents, PRs or installation, never a token of its installation, never a mirror.
    assert {(c.method, c.path, c.status) for c in github.calls(path_regex="^/repos/other/")} == {
        ("GET", "/repos/other/secret", 404)
    }
    assert _minted_for(github) == {HOME_INSTALLATION}
    assert not (tmp_path / "data" / "mirrors" / "other").exists()


def test_a_public_pr_does_not_read_a_private_repository_of_its_own_installation(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _other_repo(tmp_path, github, "acme/private", installation_id=HOME_INSTALLATION, private=True)

    head = _review(app, github, scenario, _quotes("acme/private"))

    assert "not checked: acme/private is not readable for this repository." in _headings(
        github, head
    )
    published = _everything_published(github, head)
    assert CANARY not in published and OTHER_FILE not in published
    assert not github.calls(path_regex="^/repos/acme/private/(pulls|contents|git)")
    assert not (tmp_path / "data" / "mirrors" / "acme" / "private.git").exists()


PRIVATE = "acme/private"  # private, in the PR's installation
PERMISSION_PATH = f"/repos/{PRIVATE}/collaborators/{AUTHOR}/permission"


def _asked_permission(github: FakeGitHub) -> int:
    """How many times the App asked GitHub for a permission on acme/private."""
    return len(github.calls("GET", rf"^/repos/{PRIVATE}/collaborators/[^/]+/permission$"))


def test_a_private_pr_learns_nothing_of_a_private_repository_its_author_cannot_read(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _make_private(github, REPO)
    _other_repo(tmp_path, github, PRIVATE, installation_id=HOME_INSTALLATION, private=True)
    github.set_permission(PRIVATE, AUTHOR, "none")  # a reader of acme/charts only

    head = _review(app, github, scenario, _quotes(PRIVATE))

    sentence = f"not checked: {PRIVATE} is not readable for this repository"
    assert _headings(github, head).count(f": {sentence}.") >= 3  # each of the three quotes
    published = _everything_published(github, head)
    for detail in (CANARY, OTHER_FILE, f"#{OTHER_PR}", "GitHub answered", "permission"):
        assert detail not in published
    # Looked up, its installation asked, and one question about the author for the three quotes;
    # never its contents, PRs or git, never a mirror.
    asked = [(c.method, c.path) for c in github.calls(path_regex=f"^/repos/{PRIVATE}")]
    assert sorted(set(asked)) == [
        ("GET", f"/repos/{PRIVATE}"),
        ("GET", f"/repos/{PRIVATE}/collaborators/{AUTHOR}/permission"),
        ("GET", f"/repos/{PRIVATE}/installation"),
    ]
    assert _asked_permission(github) == 1
    assert not (tmp_path / "data" / "mirrors" / "acme" / "private.git").exists()


def test_a_private_pr_reads_a_private_repository_its_author_can_read(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _make_private(github, REPO)
    _other_repo(tmp_path, github, PRIVATE, installation_id=HOME_INSTALLATION, private=True)
    github.set_permission(PRIVATE, AUTHOR, "read")  # the least role that reads it

    head = _review(app, github, scenario, _quotes(PRIVATE))

    text = _headings(github, head)
    assert "not checked" not in text
    assert f"Closest headings there: “{CANARY}” (line 2)." in text
    assert f"deploy/jobs.yaml, {OTHER_FILE}" in text
    assert f"resolves only once {PRIVATE}#{OTHER_PR} merges; merge that first" in text
    assert _minted_for(github) == {HOME_INSTALLATION}
    assert _asked_permission(github) == 1  # three quotes, one question

    # The next push, within AUTHOR_ACCESS_TTL: the answer is remembered, not asked again.
    again = _review(app, github, scenario, _quotes(PRIVATE))
    assert f"resolves only once {PRIVATE}#{OTHER_PR} merges" in _headings(github, again)
    assert _asked_permission(github) == 1


def test_the_prs_own_private_repository_named_in_full_is_read_without_asking(
    app: RunningApp, github: FakeGitHub, scenario: Scenario
) -> None:
    _make_private(github, REPO)
    quote = f"# Mirrors NO SUCH HEADING ANYWHERE in {REPO}:client/values.yaml.\n"

    head = _review(app, github, scenario, quote)

    text = _headings(github, head)
    assert f"{REPO}:client/values.yaml" in text and "not readable" not in text
    assert not github.calls("GET", r"/collaborators/[^/]+/permission$")


def test_a_public_pr_reads_a_public_repository_with_its_own_installations_token(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _other_repo(tmp_path, github, "acme/backend", installation_id=HOME_INSTALLATION, private=False)

    head = _review(app, github, scenario, _quotes("acme/backend"))

    text = _headings(github, head)
    assert f"resolves only once acme/backend#{OTHER_PR} merges; merge that first" in text
    assert f"Closest headings there: “{CANARY}” (line 2)." in text
    assert _minted_for(github) == {HOME_INSTALLATION}


def test_a_public_repository_of_another_installation_is_read_with_the_prs_token(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _other_repo(tmp_path, github, "other/public", installation_id=ELSEWHERE, private=False)

    head = _review(app, github, scenario, _quotes("other/public"))

    assert f"resolves only once other/public#{OTHER_PR} merges" in _headings(github, head)
    assert _minted_for(github) == {HOME_INSTALLATION}


def test_the_allow_list_at_base_narrows_what_is_read(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    _other_repo(tmp_path, github, "acme/backend", installation_id=HOME_INSTALLATION, private=False)
    _other_repo(tmp_path, github, "acme/frontend", installation_id=HOME_INSTALLATION, private=False)
    _set_config(github, scenario, "links:\n  repositories: [acme/frontend]\n")

    head = _review(app, github, scenario, _quotes("acme/backend") + _quotes("acme/frontend"))

    text = _headings(github, head)
    assert "not checked: acme/backend is not readable for this repository." in text
    assert f"acme/backend#{OTHER_PR}" not in text
    assert f"resolves only once acme/frontend#{OTHER_PR} merges" in text
    assert not github.calls(path_regex="^/repos/acme/backend")  # not even looked up


def test_past_five_linked_repositories_the_rest_are_not_checked(
    app: RunningApp, github: FakeGitHub, scenario: Scenario, tmp_path: Path
) -> None:
    names = [f"acme/lib{n}" for n in range(1, 7)]
    for name in names:
        _other_repo(tmp_path, github, name, installation_id=HOME_INSTALLATION, private=False)
    quotes = "".join(f"# Mirrors ONLY ON THE OPEN PR in {n}:deploy/jobs.yaml.\n" for n in names)

    head = _review(app, github, scenario, quotes)

    text = _headings(github, head)
    for name in names[:5]:
        assert f"resolves only once {name}#{OTHER_PR} merges" in text
    assert (
        "quotes “ONLY ON THE OPEN PR” in acme/lib6:deploy/jobs.yaml: not checked: more than 5 "
        "linked repositories in one review." in text
    )
    assert not github.calls(path_regex="^/repos/acme/lib6")
    mirrored = sorted(p.name for p in (tmp_path / "data" / "mirrors" / "acme").glob("lib*.git"))
    assert mirrored == [f"lib{n}.git" for n in range(1, 6)]
