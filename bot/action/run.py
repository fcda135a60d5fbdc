"""`chart-review action`: the GitHub Action's entry point (action.yml runs it).

It reads what the runner hands a step (the event payload, GITHUB_* and the action's INPUT_*),
reviews the PR of a `pull_request` / `pull_request_target` event on the job's checkout, publishes
through the App's own code with the workflow's token, and leaves the report, the step's outputs and
the job summary. Exit as `review` does: 0, 1 per `fail-on`, 2 when the workflow does not give it
what it needs (one line saying what to add), 3 a bug.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from github import GithubException

from bot.action.api import FORBIDDEN, pacing, token_client
from bot.action.checkout import open_checkout, require_commits
from bot.action.env import (
    ActionEnv,
    ActionSetupError,
    PullEvent,
    read_env,
    read_event,
    read_only_expected,
)
from bot.action.links import token_links
from bot.action.output import (
    action_values,
    report_path,
    write_formatted,
    write_outputs,
    write_report,
    write_step_summary,
)
from bot.action.review import ActionReview, review_and_publish
from bot.app.github.app import PullState, RepoClient
from bot.app.settings import render_limits, render_workers
from bot.charts.profiles import ValuesOverride
from bot.charts.resources import Resources, Sizes
from bot.engine.review import Engine, ReviewResult
from bot.git.mirror import Mirrors
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from bot.render.factory import make_renderer
from bot.report.exit_status import exit_status
from checks import REGISTRY

UNAUTHORIZED, NOT_FOUND = 401, 404
LINKS_DIR = "chart-review-links"  # the linked repositories' mirrors, under RUNNER_TEMP
READ_PULLS = (
    "GitHub refused to list the repository's pull requests (403): give the job "
    "`permissions: pull-requests: write`"
)


def run_action(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="chart-review: %(message)s")
    environ = os.environ if environ is None else environ
    env = read_env(environ, args.repo)
    values = action_values(env)  # before anything is begun: a bad one stops the step at once
    try:
        result = _review(env, environ, values)
    except GithubException as exc:
        raise ActionSetupError(_github_refusal(env, exc)) from None
    report = result.report
    outputs = write_report(report, report_path(env, args.report))
    outputs = write_formatted(env, result, outputs, REGISTRY.sections())
    write_outputs(env, outputs)
    write_step_summary(env, report, REGISTRY.sections())
    return exit_status(report, env.inputs.fail_on)


def _review(env: ActionEnv, environ: Mapping[str, str], values: ValuesOverride) -> ReviewResult:
    event = read_event(env.event_path)
    git = open_checkout(env.workspace)
    workers = render_workers(environ)
    renderer = make_renderer("embedded", render_limits(environ), workers)
    # The step's pools and memos, sized as its render processes are; ended with the step.
    resources = Resources(Sizes.for_render_workers(workers))
    opened: list[GitRepo] = []
    try:
        with resources.active():
            engine = Engine(git, renderer, REGISTRY, RenderCache(), resources=resources)
            return _review_engine(env, environ, values, event, (git, engine), opened)
    finally:
        for repo in opened:
            repo.close()
        git.close()
        resources.close()
        close = getattr(renderer, "close", None)
        if close is not None:
            close()  # its render processes


def _review_engine(
    env: ActionEnv,
    environ: Mapping[str, str],
    values: ValuesOverride,
    event: PullEvent,
    checkout: tuple[GitRepo, Engine],
    opened: list[GitRepo],
) -> ReviewResult:
    """The PR reviewed with the engine on the checkout, and published; the repositories it links
    are opened into `opened`, for the caller to close."""
    git, engine = checkout
    require_commits(git, [event.pr.base_sha, event.pr.head_sha])
    pace = pacing(environ)
    client = token_client(env.repository, env.token, env.api_url, pace, env.inputs.comment)
    open_prs = _open_pulls(client) if env.inputs.open_prs else []
    mirrors = Mirrors((env.temp_dir or Path(tempfile.gettempdir())) / LINKS_DIR)
    links = token_links(
        env.token,
        lambda name: token_client(name, env.token, env.api_url, pace),
        mirrors,
        opened,
    )
    read_only = read_only_expected(env, event)
    run = ActionReview(git, client, event.pr, env.inputs, engine, read_only, links, values)
    return review_and_publish(run, open_prs)


def _open_pulls(client: RepoClient) -> list[PullState]:
    """The open PRs, for the version race, from the API as the App has them."""
    try:
        return client.open_pulls()
    except GithubException as exc:
        if exc.status == FORBIDDEN:
            raise ActionSetupError(READ_PULLS) from None
        raise


def _github_refusal(env: ActionEnv, exc: GithubException) -> str:
    """One line for a GitHub answer the action cannot go on after."""
    if exc.status == UNAUTHORIZED:
        return (
            "GitHub refused the token (401): pass the workflow's token, "
            "`github-token: ${{ github.token }}` (the default)"
        )
    if exc.status == NOT_FOUND:
        return (
            f"GitHub answered 404 for {env.repository} at {env.api_url}: the token cannot see "
            "it; give the job `permissions: contents: read`"
        )
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    return f"GitHub answered {exc.status}: {message or 'no message'}"
