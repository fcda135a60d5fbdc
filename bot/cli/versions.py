"""`chart-review versions`: the release board of a local repository, as markdown or JSON."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.cli.open_prs import discover_open_prs
from bot.engine.config import CONFIG_PATH, ConfigError, parse_config
from bot.git.repo import GitError, GitRepo
from bot.versions.board import board_json_text, board_markdown, build_board

EXIT_OK, EXIT_USAGE = 0, 2
DEFAULT_DEVELOP = "develop"
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
    parser.add_argument(
        "--chart", action="append", metavar="PATH", help="only this chart directory; repeatable"
    )
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
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
    except (GitError, ConfigError, ValueError) as exc:
        return _usage_error(str(exc))
    finally:
        repo.close()


def _print_board(repo: GitRepo, args: argparse.Namespace) -> int:
    develop_ref = args.develop or _default_develop(repo)
    develop_sha = repo.resolve(develop_ref) if develop_ref else None
    if develop_sha is None:
        raise ValueError(
            f"unknown develop ref {develop_ref!r}" if develop_ref else "no develop branch"
        )
    config = parse_config(repo.tree(develop_sha).text(CONFIG_PATH))
    open_prs = discover_open_prs(repo, develop_sha, args.open_pr, exclude_head=None)
    board = build_board(repo, develop_sha, open_prs, args.chart, ignore=config.version.ignore)
    if args.format == "json":
        sys.stdout.write(board_json_text(board))
    else:
        sys.stdout.write(board_markdown(board, args.link))
    return EXIT_OK


def _default_develop(repo: GitRepo) -> str | None:
    if repo.resolve(DEFAULT_DEVELOP) is not None:
        return DEFAULT_DEVELOP
    return repo.default_branch()


def _usage_error(message: str) -> int:
    print(f"chart-review: error: {message}", file=sys.stderr)
    return EXIT_USAGE
