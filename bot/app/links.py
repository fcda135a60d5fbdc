"""Other repositories that a PR's references name, read through the App: the App-side counterpart
of `--link` on the command line (bot/cli/links.py).

A repository is readable when the App is installed on it (its own installation's token), or when
it is public (the current installation's token reads public repositories). Anything else becomes
a LinkedRepo with a reason, which the headings check reports as "could not verify" — never a pass.
"""

from __future__ import annotations

import logging

from github import GithubException

from bot.app.github.app import GitHubApp
from bot.app.review_pull import integration_branch_of
from bot.engine.context import LinkedRepo, RepoResolver
from bot.git.mirror import MirrorError, Mirrors

log = logging.getLogger(__name__)


def installation_resolver(
    github: GitHubApp, mirrors: Mirrors, installation_id: int
) -> RepoResolver:
    """A resolver that opens each repository once per review, on first use."""
    opened: dict[str, LinkedRepo] = {}

    def resolve(name: str) -> LinkedRepo:
        if name not in opened:
            opened[name] = _open(github, mirrors, name, installation_id)
        return opened[name]

    return resolve


def _open(github: GitHubApp, mirrors: Mirrors, name: str, fallback: int) -> LinkedRepo:
    try:
        installation = github.installation_id(name) or fallback
        client = github.repo(name, installation)
        info = client.info()
        git = mirrors.sync(name, info.clone_url, github.installation_token(installation))
        branch = integration_branch_of(git, info.default_branch)
        develop = branch.sha if branch else None
        if develop is None:
            return LinkedRepo(name, reason=f"{name} has no develop or {info.default_branch} branch")
        prs = tuple(
            p.open_pr()
            for p in client.open_pulls()
            if git.resolve(p.head_sha)
        )
        return LinkedRepo(name, git=git, develop=develop, open_prs=prs)
    except GithubException as exc:
        log.info("cannot read %s: %s", name, exc.status)
        why = "not found" if exc.status == 404 else f"GitHub answered {exc.status}"
        return LinkedRepo(name, reason=f"{name} is not readable by chart-review ({why})")
    except MirrorError as exc:
        return LinkedRepo(name, reason=f"{name} could not be fetched: {exc}")
