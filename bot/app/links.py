"""Other repositories that a PR's references name, read through the App: the App-side counterpart
of `--link` on the command line (bot/links.py).

A repository is readable when the App is installed on it (its own installation's token), or when
it is public (the current installation's token reads public repositories). Anything else becomes
a LinkedRepo with a reason, which the headings check reports as "could not verify" — never a pass.
"""

from __future__ import annotations

import logging

from github import GithubException

from bot.app.github.app import GitHubApp
from bot.engine.config import ConfigError, parse_config
from bot.engine.context import LinkedRepo, OpenPR, RepoResolver
from bot.git.mirror import MirrorError, Mirrors
from bot.git.repo import GitRepo

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
        develop = _develop(git, info.default_branch)
        if develop is None:
            return LinkedRepo(name, reason=f"{name} has no develop or {info.default_branch} branch")
        prs = tuple(
            OpenPR(p.number, p.head_sha, p.head_ref, p.base_ref, p.title)
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


def _develop(git: GitRepo, default_branch: str) -> str | None:
    """Its configured integration branch, else `develop`, else its default branch."""
    default_sha = git.resolve(f"refs/heads/{default_branch}")
    configured = None
    if default_sha:
        try:
            configured = parse_config(
                git.tree(default_sha).text(".github/chart-review.yml")
            ).develop
        except ConfigError:
            configured = None
    for branch in (configured, "develop", default_branch):
        if branch and (sha := git.resolve(f"refs/heads/{branch}")):
            return sha
    return None
