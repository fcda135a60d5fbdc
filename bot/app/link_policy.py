"""Which other repository a PR's review may read through the App: one rule, in one pure function.

A check run is as public as the PR's repository. Whatever the review reads in another repository
(whether a heading is there, the closest headings, file names, open PRs) ends up in it, so another
repository is read only when everyone who sees the PR could read it too, or when both are private
in one installation (the same owner granted the App both):

- public: readable, with the PR's own installation's token (never another installation's: GitHub
  serves public repositories to any token);
- private: readable only from a private PR repository of the same installation;
- and in any case only when the config's `links.repositories` (read at base) allows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.engine.config import LinksConfig
from bot.engine.context import RepoResolver
from bot.engine.links import NOT_READABLE


@dataclass(frozen=True)
class Visibility:
    private: bool
    installation_id: int | None  # None: the App is not installed there


def unreadable_reason(
    name: str, home: Visibility, other: Visibility | None, config: LinksConfig
) -> str | None:
    """None when repository `name` may be read for a review of a PR in `home`, else what the
    review says instead. `other` is None when the PR's installation cannot see `name` at all (it
    does not exist, or it is private to someone else: GitHub answers 404 to both)."""
    if not config.allows(name) or other is None:
        return NOT_READABLE.format(name=name)
    if not other.private:
        return None
    same = other.installation_id is not None and other.installation_id == home.installation_id
    return None if same and home.private else NOT_READABLE.format(name=name)


class LinkOpener(Protocol):
    """The other repositories one review may read: given the PR repository's visibility and the
    config at its base, a resolver for that review only (bot/app/links.py)."""

    def __call__(self, home_private: bool, config: LinksConfig) -> RepoResolver: ...
