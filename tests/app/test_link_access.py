"""A PR author's permission on another private repository: asked of the fake GitHub over real HTTP,
remembered in a real store for AUTHOR_ACCESS_TTL by a clock the test moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app.github.app import AppCredentials, GitHubApp, RepoClient
from bot.app.link_access import AUTHOR_ACCESS_TTL, AuthorAccess
from bot.app.store import SqliteStore
from tests.support.clock import ManualClock
from tests.support.fakegithub import FakeGitHub

PRIVATE = "acme/private"
AUTHOR = "contributor"
PERMISSION = rf"^/repos/{PRIVATE}/collaborators/[^/]+/permission$"


@pytest.fixture
def client(github: FakeGitHub) -> RepoClient:
    github.add_repo(PRIVATE, private=True)
    creds = AppCredentials(github.app_id, github.app_private_key, github.url, 0.0, 0.0, 0.05)
    return GitHubApp(creds).repo(PRIVATE, 1)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def access(tmp_path: Path, clock: ManualClock) -> AuthorAccess:
    return AuthorAccess(SqliteStore(tmp_path / "state.db", clock))


def _asked(github: FakeGitHub) -> int:
    return len(github.calls("GET", PERMISSION))


@pytest.mark.parametrize(
    ("role", "reads"),
    [("admin", True), ("maintain", True), ("write", True), ("triage", True), ("read", True)]
    + [("none", False)],
)
def test_every_role_from_read_up_reads(
    github: FakeGitHub, client: RepoClient, access: AuthorAccess, role: str, reads: bool
) -> None:
    github.set_permission(PRIVATE, AUTHOR, role)
    assert access.reads(1, AUTHOR, client) is reads


def test_the_answer_is_remembered_for_the_ttl_then_asked_again(
    github: FakeGitHub, client: RepoClient, access: AuthorAccess, clock: ManualClock
) -> None:
    github.set_permission(PRIVATE, AUTHOR, "read")
    assert access.reads(1, AUTHOR, client)
    assert access.reads(1, AUTHOR.upper(), client)  # logins are case-insensitive: one answer
    github.set_permission(PRIVATE, AUTHOR, "none")  # revoked on GitHub
    clock.advance(AUTHOR_ACCESS_TTL - 1)
    assert access.reads(1, AUTHOR, client)
    assert _asked(github) == 1

    clock.advance(1)
    assert not access.reads(1, AUTHOR, client)
    assert _asked(github) == 2


def test_each_author_and_installation_is_asked_for_itself(
    github: FakeGitHub, client: RepoClient, access: AuthorAccess
) -> None:
    github.set_permission(PRIVATE, AUTHOR, "read")
    assert access.reads(1, AUTHOR, client)
    assert not access.reads(1, "stranger", client)  # a private repository: no role is none
    assert access.reads(2, AUTHOR, client)
    assert _asked(github) == 3


def test_an_error_is_no_access_and_is_not_remembered(
    github: FakeGitHub, client: RepoClient, access: AuthorAccess
) -> None:
    github.set_permission(PRIVATE, AUTHOR, "read")
    github.inject("GET", PERMISSION, 403)  # the App lacks the permission to ask, say
    assert not access.reads(1, AUTHOR, client)
    assert access.reads(1, AUTHOR, client)
    assert _asked(github) == 2
