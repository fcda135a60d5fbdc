"""`chart-review versions`: the release board of a local repository, as markdown or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.cli.open_prs import add_discovery_arguments, discover_open_prs, discovery_from
from bot.errors import ChartReviewError, UsageError
from bot.git.refs import integration_branch
from bot.git.repo import GitError, GitRepo
from bot.model.config import CONFIG_PATH, parse_config
from bot.model.ct_config import NO_CT, load_ct_config
from bot.model.rivals import branch_name
from bot.versions.board import board_json_text, board_markdown, build_board
from bot.versions.options import version_options
from checks import REGISTRY

EXIT_OK, EXIT_USAGE = 0, 2
HELP = "show every open PR's chart-version claim and whether it is still free"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser("versions", help=HELP, description=HELP)
    parser.add_argument("--repo", default=".", help="path of the chart repository (default: .)")
    parser.add_argument(
        "--develop", help="the integration branch (default: develop, else the default branch)"
    )
    parser.add_argument(
        "--open-pr",
        action="append",
        metavar="NUMBER=REF",
        help="an open PR's head; repeatable; replaces discovery from refs/pull/*/head and branches",
    )
    add_discovery_arguments(parser)
    parser.add_argument(
        "--chart", action="append", metavar="PATH", help="only this chart directory; repeatable"
    )
    parser.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="the board as a markdown table, or as json",
    )
    parser.add_argument(
        "--link", metavar="FORMAT", help="PR link, e.g. https://host/o/r/pull/{number}"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        repo = GitRepo(args.repo)
    except GitError as exc:
        return _usage_error(str(exc))
    try:
        return _print_board(repo, args)
    except ChartReviewError as exc:
        return _usage_error(str(exc))
    finally:
        repo.close()


def _print_board(repo: GitRepo, args: argparse.Namespace) -> int:
    develop_sha, branch = _develop(repo, args.develop)
    config = parse_config(repo.tree(develop_sha).text(CONFIG_PATH), known_checks=REGISTRY.options)
    open_prs = discover_open_prs(
        repo, develop_sha, args.open_pr, exclude_head=None, rules=discovery_from(args)
    )
    board = build_board(
        repo,
        develop_sha,
        open_prs,
        args.chart,
        ignore=version_options(config).ignore,
        branch=branch,
    )
    if args.format == "json":
        sys.stdout.write(board_json_text(board))
    else:
        sys.stdout.write(board_markdown(board, args.link))
    return EXIT_OK


def _develop(repo: GitRepo, requested: str | None) -> tuple[str, str]:
    """The branch asked for, else the integration branch that the config (or ct.yaml's
    target-branch) of the default branch (the repository's HEAD) names, as bot/git/refs.py
    decides: its commit and its name."""
    if requested:
        sha = repo.resolve(requested)
        if sha is None:
            raise UsageError(f"unknown develop ref {requested!r}")
        return sha, branch_name(requested)
    head = repo.resolve(repo.default_branch() or "HEAD")
    tree = repo.tree(head) if head else None
    configured = (
        parse_config(tree.text(CONFIG_PATH), known_checks=REGISTRY.options).develop
        if tree
        else None
    )
    ct = load_ct_config(tree) if tree else NO_CT
    found = integration_branch(repo, configured, target_refs=ct.target_refs)
    if found is None:
        raise UsageError("no develop branch")
    return found.sha, branch_name(found.name)


def _usage_error(message: str) -> int:
    print(f"chart-review: error: {message}", file=sys.stderr)
    return EXIT_USAGE
