"""What a review may learn about other repositories, whoever opens them (the App, `--link`): the
config's allow-list and the cap on how many one review reads, and the words for a repository not
read.

One sentence for every repository that is not read, whatever the cause (not on the allow-list,
private elsewhere, missing): even the difference between "not found" and "forbidden" would tell a
public PR that a private repository exists.
"""

from __future__ import annotations

from bot.model.config import LinksConfig
from bot.model.context import LinkedRepo, RepoResolver

NOT_READABLE = "not checked: {name} is not readable for this repository"
TOO_MANY = "not checked: more than {limit} linked repositories in one review"


def not_readable(name: str) -> LinkedRepo:
    return LinkedRepo(name, reason=NOT_READABLE.format(name=name))


def link_key(name: str) -> str:
    """GitHub's repository names are case-insensitive: `Acme/X` and `acme/x` are one repository."""
    return name.lower()


def bounded(resolver: RepoResolver, config: LinksConfig) -> RepoResolver:
    """`resolver` asked only about repositories the allow-list names, and about the first
    `config.max_repositories` of them (in the order the review asks); every other name is answered
    here without asking it."""
    admitted: dict[str, LinkedRepo] = {}

    def resolve(name: str) -> LinkedRepo:
        key = link_key(name)
        if key in admitted:
            return admitted[key]
        if not config.allows(name):
            return not_readable(name)
        if len(admitted) >= config.max_repositories:
            return LinkedRepo(name, reason=TOO_MANY.format(limit=config.max_repositories))
        admitted[key] = resolver(name)
        return admitted[key]

    return resolve
