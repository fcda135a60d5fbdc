"""`--offline` and `--repository-config`, as helm has them: how a command gets charts'
dependencies from chart repositories and OCI registries (bot/render/deps/)."""

from __future__ import annotations

import argparse

from bot.errors import UsageError
from bot.render.deps.fetcher import HelmFetcher
from bot.render.deps.policy import Access
from bot.render.deps.repo_config import RepositoryConfigError, load_repository_config


def add_dependency_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--offline",
        action="store_true",
        help="fetch no chart dependency from a repository or registry; what the machine's "
        "dependency cache holds is still used, and a chart needing more is 'not reviewed'",
    )
    p.add_argument(
        "--repository-config",
        metavar="FILE",
        help="helm's repositories.yaml: names for @NAME repositories, and credentials",
    )


def fetcher_from(args: argparse.Namespace) -> HelmFetcher:
    repositories: tuple[Access, ...] = ()
    if getattr(args, "repository_config", None):
        try:
            repositories = load_repository_config(args.repository_config)
        except RepositoryConfigError as exc:
            raise UsageError(f"--repository-config {exc}") from None
    return HelmFetcher(repositories=repositories)
