"""Review one PR of an installed repository and publish the result: the worker's main job.

Order matters for what a reviewer sees: every check run goes `in_progress` first, and whatever
happens afterwards each one is completed — with the verdict, or `neutral` with the reason — so no
run is left spinning and no review that did not finish ever reads as success.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import checks as registry
from bot.app.github.app import PullState, RepoClient
from bot.app.publish import (
    CHECK_RUN_PREFIX,
    check_run_outputs,
    failed_output,
    inline_comments,
    summary_comment,
)
from bot.engine.config import CONFIG_PATH, Config, ConfigError, parse_config
from bot.engine.context import OpenPR, PullRequestInfo, RepoResolver
from bot.engine.report import Report
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.render.base import Renderer
from bot.render.cache import RenderCache

log = logging.getLogger(__name__)

RENDER_RUN = CHECK_RUN_PREFIX + "render"
REVIEW_BODY = (
    "chart-review found these on lines this PR changed (the summary comment has the rest)."
)


@dataclass(frozen=True)
class Published:
    report: Report | None
    conclusion: str  # the worst check-run conclusion: failure, neutral or success


def run_names(config: Config | None) -> list[str]:
    """The check runs a review will complete; with an unreadable config, every registered one."""
    names = [c.name for c in registry.CHECKS if config is None or config.enabled(c.name)]
    return [CHECK_RUN_PREFIX + n for n in names]


def target_config(git: GitRepo, target: str) -> tuple[Config | None, str | None]:
    try:
        text = git.tree(target).text(CONFIG_PATH)
        return parse_config(text, known_checks=[c.name for c in registry.CHECKS]), None
    except ConfigError as exc:
        return None, str(exc)


def review_pull(
    client: RepoClient,
    git: GitRepo,
    pr: PullState,
    open_prs: Sequence[PullState],
    renderer: Renderer,
    cache: RenderCache,
    links: RepoResolver,
) -> Published:
    target = git.resolve(f"refs/heads/{pr.base_ref}") or pr.base_sha
    config, config_error = target_config(git, target)
    runs = client.begin_check_runs(pr.head_sha, run_names(config))
    try:
        if config_error is not None:
            raise ConfigError(config_error)
        report, changed = _review(git, pr, target, open_prs, renderer, cache, links)
        conclusion = _publish(client, pr, report, changed, runs)
        return Published(report, conclusion)
    except Exception as exc:
        log.exception("review of #%s at %s failed", pr.number, pr.head_sha[:12])
        reason = _reason(exc)
        for name, run_id in runs.items():
            client.complete_check_run(run_id, failed_output(name, reason))
        return Published(None, "neutral")


def _review(
    git: GitRepo,
    pr: PullState,
    target: str,
    open_prs: Sequence[PullState],
    renderer: Renderer,
    cache: RenderCache,
    links: RepoResolver,
) -> tuple[Report, dict[str, frozenset[int]]]:
    """The report, and the lines the PR added per file (where inline comments may go)."""
    others = tuple(
        OpenPR(p.number, p.head_sha, p.head_ref, p.base_ref, p.title)
        for p in open_prs
        if p.number != pr.number
    )
    inp = ReviewInput(
        base=target,
        head=pr.head_sha,
        open_prs=others,
        pr=PullRequestInfo(number=pr.number, title=pr.title, body=pr.body),
        links=links,
    )
    started = time.perf_counter()
    log.info("reviewing")
    result = Engine(git, renderer, cache).review(inp)
    log.info("reviewed in %.2f s", time.perf_counter() - started)
    changed = {c.path: c.added_lines for c in result.context.changes if c.added_lines}
    return result.report, changed


def _publish(
    client: RepoClient,
    pr: PullState,
    report: Report,
    changed: dict[str, frozenset[int]],
    runs: dict[str, int],
) -> str:
    outputs = check_run_outputs(report, registry.sections())
    extra = [o.name for o in outputs if o.name not in runs]
    if extra:
        runs.update(client.begin_check_runs(pr.head_sha, extra))
    for out in outputs:
        client.complete_check_run(runs[out.name], out)
        del runs[out.name]  # only once GitHub has it: a failed one is completed as failed below
    for name, run_id in runs.items():  # a check the config turned off since the runs began
        client.complete_check_run(run_id, failed_output(name, "this check is disabled"))
    comments = inline_comments(report, changed, client.bot_review_comments(pr.number))
    if comments:
        client.post_review(pr.number, pr.head_sha, comments, REVIEW_BODY)
    # Last, so that the summary naming this head means the whole review is out.
    client.upsert_summary_comment(pr.number, summary_comment(report, registry.sections()))
    return _worst(o.conclusion for o in outputs)


def _worst(conclusions: Iterable[str]) -> str:
    found = set(conclusions)
    for c in ("failure", "neutral"):
        if c in found:
            return c
    return "success"


def _reason(exc: Exception) -> str:
    """One line for the check run: what went wrong, never a traceback (the log has it)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no message'}"[:500]
