"""Other repositories a PR's references name, read by the Action as the App reads them
(bot/app/links.py): looked up through the API, then mirrored over HTTPS from the clone URL GitHub
gives (GitHub Enterprise Server's own host there), the workflow's token as a header.

The rule is the App's (bot/app/link_policy.py) with the token standing in for the installation: a
public repository is read; a private one only from a private PR repository of the same owner,
since a check run is as public as its repository, and only when the PR's author may read it
(asked with the token; an answer it may not get is no); and only what `links.repositories`
allows. A workflow's own token sees no other private repository anyway: GitHub answers 404 there.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from github import GithubException

from bot.app.github.repo import RepoClient, RepoInfo
from bot.app.link_access import author_role
from bot.app.link_policy import READ_ROLES, Home, LinkOpener, Visibility, unreadable_reason
from bot.app.links import read_linked
from bot.git.mirror import Mirrors
from bot.git.repo import GitRepo
from bot.model.config import LinksConfig
from bot.model.context import LinkedRepo, RepoResolver
from bot.model.links import bounded, not_readable

log = logging.getLogger(__name__)

# The workflow's token stands for one installation, its owner's: a repository of the PR's owner
# counts as granted with the PR's repository, another owner's as not, whatever the token sees.
WORKFLOW_GRANT = 0


def owner(full_name: str) -> str:
    return full_name.split("/", 1)[0].lower()


def visibility(home: str, name: str, info: RepoInfo) -> Visibility:
    return Visibility(info.private, WORKFLOW_GRANT if owner(name) == owner(home) else None)


def token_links(
    token: str,
    client_for: Callable[[str], RepoClient],
    mirrors: Mirrors,
    opened: list[GitRepo],
) -> LinkOpener:
    """The action's LinkOpener; every repository opened is added to `opened`, for the caller to
    close."""

    def for_review(home: Home, config: LinksConfig) -> RepoResolver:
        def open_one(name: str) -> LinkedRepo:
            client = client_for(name)
            try:
                info = client.info()
            except GithubException as exc:
                log.info("cannot look up %s: GitHub answered %s", name, exc.status)
                return not_readable(name)
            reason = unreadable_reason(
                name,
                home,
                WORKFLOW_GRANT,
                visibility(home.repo, name, info),
                config,
                lambda: author_role(client, home.author) in READ_ROLES,
            )
            if reason is not None:
                log.info("not reading %s for this repository", name)
                return LinkedRepo(name, reason=reason)
            return read_linked(mirrors, client, name, info, token, opened)

        return bounded(open_one, config)

    return for_review
