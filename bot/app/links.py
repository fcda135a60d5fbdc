"""Other repositories that a PR's references name, read through the App: the App-side counterpart
of `--link` on the command line (bot/cli/links.py).

What may be read is bot/app/link_policy.py's rule; everything is read with the token of the PR's
own installation, never another's. A repository is looked up (one GET with that token, and for a
private one the App's installation on it, then the PR author's permission on it) before anything
in it is read: its contents, its mirror and its open PRs only once the rule says yes. Any other
answer is the one sentence of bot/model/links.py, whatever the cause, which the headings check
reports as "not checked" — never a pass, and nothing else about that repository.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from github import GithubException

from bot.app.github.app import GitHubApp, RepoClient, RepoInfo
from bot.app.link_access import AuthorAccess
from bot.app.link_policy import Home, LinkOpener, Visibility, unreadable_reason
from bot.app.review_pull import integration_branch_of
from bot.git.mirror import MirrorError, Mirrors, MirrorTooLarge
from bot.git.repo import GitRepo
from bot.model.config import LinksConfig
from bot.model.context import LinkedRepo, RepoResolver
from bot.model.links import NOT_READABLE, bounded, link_key
from bot.model.rivals import branch_name

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Installation:
    """What every review of one installation's PRs reads other repositories with."""

    github: GitHubApp
    mirrors: Mirrors
    access: AuthorAccess
    installation_id: int


def installation_resolver(where: Installation, opened: list[GitRepo]) -> LinkOpener:
    """For the reviews of one installation's PRs: per review, a resolver that opens each allowed
    repository once, on first use, and at most `links.max_repositories` of them. Each repository
    opened is added to `opened`, for the caller to close after the review."""

    def for_review(home: Home, config: LinksConfig) -> RepoResolver:
        return bounded(lambda name: _open(where, name, home, config, opened), config)

    return for_review


def _open(
    where: Installation, name: str, home: Home, config: LinksConfig, opened: list[GitRepo]
) -> LinkedRepo:
    installation_id = where.installation_id
    client = where.github.repo(name, installation_id)
    found = _look_up(where.github, client, name)
    other = Visibility(found[0].private, found[1]) if found else None
    reason = unreadable_reason(
        name,
        home,
        installation_id,
        other,
        config,
        lambda: where.access.reads(installation_id, home.author, client),
    )
    if reason is not None or found is None:
        log.info("not reading %s for this repository", name)
        return LinkedRepo(name, reason=reason or NOT_READABLE.format(name=name))
    token = where.github.installation_token(installation_id)
    return read_linked(where.mirrors, client, name, found[0], token, opened)


def _look_up(
    github: GitHubApp, client: RepoClient, name: str
) -> tuple[RepoInfo, int | None] | None:
    """The repository as the PR's installation sees it, with the App's installation on it when it
    is private (for a public one that does not matter); None when that installation cannot see
    it, or GitHub would not say."""
    try:
        info = client.info()
        return info, (github.installation_id(name) if info.private else None)
    except GithubException as exc:
        log.info("cannot look up %s: GitHub answered %s", name, exc.status)
        return None


def read_linked(
    mirrors: Mirrors,
    client: RepoClient,
    name: str,
    info: RepoInfo,
    token: str,
    opened: list[GitRepo],
) -> LinkedRepo:
    """A repository the rule lets this review read: its mirror, develop branch and open PRs, all
    with `token` (the PR's installation's; in the Action, the workflow's)."""
    try:
        mirrors.check_linked_size(name, info.size_kb * 1024)  # before fetching any of it
        git = mirrors.sync_linked(link_key(name), info.clone_url, token)
        opened.append(git)  # its cat-file process lives until the review is done
        branch = integration_branch_of(git, info.default_branch)
        if branch is None:
            why = f"not checked: {name} has no develop or {info.default_branch} branch"
            return LinkedRepo(name, reason=why)
        prs = tuple(p.open_pr() for p in client.open_pulls() if git.resolve(p.head_sha))
        return LinkedRepo(
            name, git=git, develop=branch.sha, open_prs=prs, branch=branch_name(branch.name)
        )
    except GithubException as exc:
        return LinkedRepo(name, reason=f"not checked: GitHub answered {exc.status} for {name}")
    except MirrorTooLarge as exc:
        return LinkedRepo(name, reason=f"not checked: {exc}")
    except MirrorError as exc:
        return LinkedRepo(name, reason=f"not checked: {name} could not be fetched ({exc})")
