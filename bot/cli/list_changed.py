"""`chart-review list-changed`: the chart directories a change touches, one a line, as
`ct list-changed` prints them, by the rule the review itself picks its charts with."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.charts.selection import chart_dirs
from bot.errors import UsageError
from bot.git import shallow
from bot.git.repo import GitRepo
from bot.model.chart_files import chart_file
from bot.model.ct_config import load_ct_config

HELP = "print the chart directories the change from the merge base of --base to --head touches"
EXIT_OK = 0


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("list-changed", help=HELP, description=HELP)
    p.add_argument("--repo", default=".", help="a git repository, bare or not (default: .)")
    p.add_argument("--base", required=True, help="the branch or commit the change targets")
    p.add_argument("--head", default="HEAD", help="the change's head (default: HEAD)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    repo = GitRepo(args.repo)
    try:
        for directory in changed_charts(repo, args.base, args.head):
            sys.stdout.write(directory + "\n")
    finally:
        repo.close()
    return EXIT_OK


def changed_charts(repo: GitRepo, base: str, head: str) -> list[str]:
    """As the review measures a PR: from the merge base, so the target's own changes are never
    counted, with the target's ct.yaml choosing what a chart is. Like ct, a chart the change
    deletes is not listed: there is nothing left to lint or install."""
    target, tip = _commit(repo, base, "--base"), _commit(repo, head, "--head")
    # None found is refused: the target's tip would list every chart it changed since the fork.
    merge_base = shallow.merge_base(repo, str(repo.path), target, tip, (base, head))
    changes = repo.changes_from_merge_base(target, tip)
    if changes is None:  # no single merge base: measured against the one chosen above
        changes = repo.changes(merge_base, tip)
    head_tree = repo.tree(tip)
    ct = load_ct_config(repo.tree(target))
    dirs = chart_dirs(repo.tree(merge_base), head_tree, changes, (), False, ct)
    return [d for d in dirs if head_tree.read(chart_file(d)) is not None]


def _commit(repo: GitRepo, ref: str, option: str) -> str:
    sha = repo.resolve(ref)
    if sha is None:
        raise UsageError(f"{option} '{ref}' is not a commit in {repo.path}")
    return sha
