"""`chart-review action`'s arguments. Apart from bot/action/run.py so that registering it costs
the command line nothing: the App's GitHub stack is imported only when the action runs."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "action",
        help="the GitHub Action: review the PR of the workflow's event and publish it "
        "(reads GITHUB_* and INPUT_* as a runner sets them)",
    )
    p.add_argument("--repo", help="the checkout to review (default: GITHUB_WORKSPACE)")
    p.add_argument(
        "--report",
        metavar="FILE",
        help="write the JSON report here (default: RUNNER_TEMP/chart-review-report.json), and "
        "the whole rendered diff beside it, its suffix .diff",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bot.action.run import run_action

    return run_action(args)
