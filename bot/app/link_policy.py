"""Which other repository a PR's review may read through the App: one rule, in one pure function.

A check run is as public as the PR's repository. Whatever the review reads in another repository
(whether a heading is there, the closest headings, file names, open PRs) ends up in it, and the
PR's author chooses what it asks about. So another repository is read only when everyone who sees
the PR could read it too, or when the author could read it anyway:

- public: readable, with the PR's own installation's token (never another installation's: GitHub
  serves public repositories to any token);
- the PR's own repository: readable (its author reads it already);
- private: readable only from a private PR repository of the same installation (the same owner
  granted the App both), and only when the PR's author has at least read permission on it
  (GitHub's collaborator permission API). Without that, anyone who may open a PR in one private
  repository could probe every other private repository of the owner, heading by heading;
- and in any case only when the config's `links.repositories` (read at base) allows it. The list
  names what is relevant, never who may learn about it: it does not stand in for the author check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.model.config import LinksConfig
from bot.model.context import RepoResolver
from bot.model.links import NOT_READABLE, link_key

# The roles GitHub's collaborator permission API names that include reading the repository; any
# other answer (none, a 404, an error) is no access: the rule fails closed.
READ_ROLES = frozenset({"admin", "maintain", "write", "triage", "read"})


@dataclass(frozen=True)
class Visibility:
    private: bool
    installation_id: int | None  # None: the App is not installed there


@dataclass(frozen=True)
class Home:
    """The PR a review is for, as the rule reads it."""

    repo: str  # owner/name of the PR's (base) repository
    private: bool
    author: str  # the PR's author's login; "" when unknown, which reads no private repository


def unreadable_reason(
    name: str,
    home: Home,
    installation_id: int | None,
    other: Visibility | None,
    config: LinksConfig,
    author_reads: Callable[[], bool],
) -> str | None:
    """None when repository `name` may be read for a review of a PR in `home` (installed in
    `installation_id`), else what the review says instead. `other` is None when the PR's
    installation cannot see `name` at all (it does not exist, or it is private to someone else:
    GitHub answers 404 to both). `author_reads` asks whether the PR's author may read `name`; it
    is called only for a private repository the rest of the rule lets through."""
    refused = NOT_READABLE.format(name=name)
    if not config.allows(name) or other is None:
        return refused
    if not other.private or link_key(name) == link_key(home.repo):
        return None
    same = other.installation_id is not None and other.installation_id == installation_id
    if not (same and home.private and home.author):
        return refused
    return None if author_reads() else refused


class LinkOpener(Protocol):
    """The other repositories one review may read: given the PR it is for and the config at its
    base, a resolver for that review only (bot/app/links.py)."""

    def __call__(self, home: Home, config: LinksConfig) -> RepoResolver: ...
