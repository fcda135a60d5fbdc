"""Other repositories a review may read, on the command line: `--link OWNER/NAME=PATH[@REF]` maps a
repository that references name to a local git repository."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from bot.cli.open_prs import DEFAULT_DISCOVERY, Discovery, open_pull_requests
from bot.errors import UsageError
from bot.git.refs import integration_branch
from bot.git.repo import GitError, GitRepo
from bot.model.context import LinkedRepo, OpenPR, RepoResolver
from bot.model.rivals import branch_name

LINK_USAGE = "--link OWNER/NAME=PATH[@REF]"
REPO_NAME_RE = re.compile(r"^[A-Za-z0-9-]+/[A-Za-z0-9_.-]+$")
REF_RE = re.compile(r"^[\w./-]+$")
NOT_LINKED = "not linked; pass --link OWNER/NAME=PATH"


def parse_link(arg: str) -> tuple[str, str, str | None]:
    """`OWNER/NAME=PATH[@REF]` → (name, path, ref or None). A path holding `@` must end in
    `@REF`."""
    name, sep, rest = arg.partition("=")
    name = name.strip()
    if not sep or not REPO_NAME_RE.match(name):
        raise UsageError(f"{LINK_USAGE}: expected a repository OWNER/NAME before '=', got {arg!r}")
    path, at, ref = rest.rpartition("@") if "@" in rest else (rest, "", "")
    if not path:
        raise UsageError(f"{LINK_USAGE}: no local path after '=' in {arg!r}")
    if at and (not ref or ".." in ref or not REF_RE.match(ref)):
        raise UsageError(f"{LINK_USAGE}: {ref!r} is not a git ref (in {arg!r})")
    return name, path, ref or None


def local_resolver(
    links: Mapping[str, tuple[str, str | None]], rules: Discovery = DEFAULT_DISCOVERY
) -> RepoResolver:
    """Open every linked repository now, so that a wrong path or ref fails before the review starts
    (UsageError naming the link); the resolver then answers from what was opened. Their open PRs
    are found by the review's own `rules` (`--open-pr-max-age`, `--no-open-prs`)."""
    opened = {name: _open(name, path, ref, rules) for name, (path, ref) in links.items()}

    def resolve(name: str) -> LinkedRepo:
        return opened.get(name) or LinkedRepo(name=name, reason=NOT_LINKED)

    return resolve


def _open(name: str, path: str, ref: str | None, rules: Discovery) -> LinkedRepo:
    try:
        repo = GitRepo(path)
    except GitError as exc:
        raise UsageError(f"--link {name}: {exc}") from None
    develop, branch = _develop(repo, ref)
    if develop is None:
        wanted = ref or "develop, or a default branch"
        raise UsageError(f"--link {name}: {path} has no {wanted}")
    found = open_prs(repo, develop, rules)
    return LinkedRepo(name=name, git=repo, develop=develop, open_prs=found, branch=branch)


def _develop(repo: GitRepo, ref: str | None) -> tuple[str | None, str]:
    """The linked repository's branch to read: its commit and its name."""
    if ref is not None:
        return repo.resolve(ref), branch_name(ref)
    found = integration_branch(repo)
    return (found.sha, branch_name(found.name)) if found else (None, "develop")


def open_prs(
    repo: GitRepo, develop: str, rules: Discovery = DEFAULT_DISCOVERY
) -> tuple[OpenPR, ...]:
    """The `refs/pull/N/head` still open, by the rules of bot/cli/open_prs.py (no branches: a
    linked repository is read for the files it holds, and need not hold a chart)."""
    return open_pull_requests(repo, develop, replace(rules, bodies=None))
