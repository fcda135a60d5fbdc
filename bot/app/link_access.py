"""Whether a PR's author may read another private repository, as GitHub's collaborator permission
API says (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`), asked with the PR's
installation's token and remembered in the store for every worker of the installation.

The answer is kept per (installation, author, repository) for AUTHOR_ACCESS_TTL: a review that
quotes one repository many times, and the reviews of the next pushes, cost one request; access
granted or revoked on GitHub counts here after at most that long.
"""

from __future__ import annotations

import logging

from github import GithubException

from bot.app.github.repo import NO_ROLE, RepoClient
from bot.app.link_policy import READ_ROLES
from bot.app.store import Store

log = logging.getLogger(__name__)

AUTHOR_ACCESS_TTL = 300.0  # seconds: 5 minutes
KEY_PREFIX = "link-access:"


def access_key(installation_id: int, author: str, repo: str) -> str:
    """GitHub's logins and repository names are case-insensitive: one key for all spellings."""
    return f"{KEY_PREFIX}{installation_id}:{author.lower()}:{repo.lower()}"


class AuthorAccess:
    """The remembered answers; built once per worker (bot/app/jobs.py), over its store."""

    def __init__(self, store: Store, ttl: float = AUTHOR_ACCESS_TTL) -> None:
        self._store = store
        self._ttl = ttl

    def reads(self, installation_id: int, author: str, client: RepoClient) -> bool:
        """Whether `author` has at least read permission on `client`'s repository."""
        key = access_key(installation_id, author, client.full_name)
        role = self._store.get(key)
        if role is None:
            role = author_role(client, author)
            if role is None:
                return False  # GitHub would not say: not remembered, asked again next time
            self._store.put(key, self._ttl, role)
        return role in READ_ROLES


def author_role(client: RepoClient, author: str) -> str | None:
    """The author's role on `client`'s repository (`none` for no access); None when GitHub
    answered an error other than 404, which reads as no access without being remembered."""
    try:
        return client.permission(author) or NO_ROLE
    except GithubException as exc:
        log.info(
            "cannot ask %s for %s's permission: GitHub answered %s",
            client.full_name,
            author,
            exc.status,
        )
        return None
