"""Review one PR of an installed repository and publish the result: the worker's main job.

Order matters for what a reviewer sees: every check run goes `in_progress` first, and whatever
happens afterwards each one is completed — with the verdict, or `neutral` with the reason — so no
run is left spinning and no review that did not finish ever reads as success.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bot.app.github.app import PullState, RepoClient
from bot.app.link_policy import Home, LinkOpener
from bot.charts.resources import Resources
from bot.engine.review import Engine, ReviewInput, ReviewResult
from bot.errors import ChartReviewError
from bot.git.refs import Branch, integration_branch
from bot.git.repo import GitRepo
from bot.model.config import (
    CONFIG_PATH,
    ONE_RUN,
    CheckRunLayout,
    Config,
    ConfigError,
    layout_of_text,
    parse_config,
)
from bot.model.context import PullRequestInfo, RepoResolver
from bot.model.ct_config import NO_CT, CtConfigError, load_ct_config
from bot.model.report import Report
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.deps.fetcher import DependencyFetcher
from bot.report.bodies import CheckRunOutput, failed_output, worst
from bot.report.inline import has_inline, inline_plan
from bot.report.run_layout import check_run_outputs, layout_of, run_names, summary_comment
from checks import REGISTRY

log = logging.getLogger(__name__)

REVIEW_BODY = (
    "chart-review found these on lines this PR changed (the summary comment has the rest)."
)


@dataclass(frozen=True)
class Published:
    report: Report | None
    conclusion: str  # the worst check-run conclusion: failure, neutral or success


def begun_runs(config: Config | None, layout: CheckRunLayout) -> list[str]:
    """The check runs a review will complete; with an unreadable config, every registered one of
    the layout. A quiet check (rendering) gets its `per-check` run only when it has something to
    say."""
    return run_names(layout, (c.name for c in REGISTRY if not c.quiet), config)


def config_layout(
    git: GitRepo, target: str, config: Config | None, path: str = CONFIG_PATH
) -> CheckRunLayout:
    """The layout the config at `target` asks for, read leniently where the config is unusable:
    its runs must still be the ones branch protection waits for."""
    if config is not None:
        return layout_of(config)
    try:
        return layout_of_text(git.tree(target).text(path))
    except ChartReviewError:  # an unreadable tree is the review's to report
        return ONE_RUN


def integration_branch_of(git: GitRepo, default_branch: str) -> Branch | None:
    """The repository's integration branch, by the config (or ct.yaml's target-branch) on its
    default branch; a malformed ct.yaml is the review's to report, and names no branch here."""
    default_sha = git.resolve(f"refs/heads/{default_branch}")
    config, _ = target_config(git, default_sha) if default_sha else (None, None)
    try:
        ct = load_ct_config(git.tree(default_sha)) if default_sha else NO_CT
    except CtConfigError:
        ct = NO_CT
    return integration_branch(
        git,
        config.develop if config else None,
        default_branch=default_branch,
        target_refs=ct.target_refs,
    )


def target_config(git: GitRepo, target: str) -> tuple[Config | None, str | None]:
    try:
        text = git.tree(target).text(CONFIG_PATH)
        return parse_config(text, known_checks=REGISTRY.options), None
    except ConfigError as exc:
        return None, str(exc)


def review_pull(
    client: RepoClient,
    git: GitRepo,
    pr: PullState,
    open_prs: Sequence[PullState],
    renderer: Renderer,
    cache: RenderCache,
    links: LinkOpener,
    fetcher: DependencyFetcher | None = None,
    resources: Resources | None = None,
) -> Published:
    """`resources`: the worker's pools and memos (None: the process's)."""
    target = git.resolve(f"refs/heads/{pr.base_ref}") or pr.base_sha
    config, config_error = target_config(git, target)
    layout = config_layout(git, target, config)
    runs = client.begin_check_runs(pr.head_sha, begun_runs(config, layout))
    try:
        if config is None:
            raise ConfigError(config_error or CONFIG_PATH)
        # What this review may read elsewhere: by the PR repository's visibility, its author's
        # permissions, and the config at base (a PR cannot widen it).
        review_links = links(Home(client.full_name, pr.private, pr.user), config.links)
        engine = Engine(git, renderer, REGISTRY, cache, fetcher, resources=resources)
        result = _review(engine, pr, target, open_prs, review_links)
        publisher = CheckRunPublisher(client, pr, runs, layout=layout)
        publisher.publish(result)
        return Published(result.report, publisher.conclusion)
    except Exception as exc:
        log.exception("review of #%s at %s failed", pr.number, pr.head_sha[:12])
        reason = failure_reason(exc)
        for name, run_id in runs.items():
            client.complete_check_run(run_id, failed_output(name, reason))
        return Published(None, "neutral")


def _review(
    engine: Engine,
    pr: PullState,
    target: str,
    open_prs: Sequence[PullState],
    links: RepoResolver,
) -> ReviewResult:
    others = tuple(p.open_pr() for p in open_prs if p.number != pr.number)
    inp = ReviewInput(
        base=target,
        base_name=pr.base_ref,
        head=pr.head_sha,
        open_prs=others,
        pr=PullRequestInfo(number=pr.number, title=pr.title, body=pr.body),
        links=links,
    )
    started = time.perf_counter()
    log.info("reviewing")
    result = engine.review(inp)
    log.info("reviewed in %.2f s", time.perf_counter() - started)
    return result


class CheckRunPublisher:
    """The App's Publisher: completes the check runs begun before the review (and begins those
    the report needs beyond them), posts inline comments on lines the PR changed, and keeps the
    summary comment; `conclusion` is then the worst run's."""

    def __init__(
        self,
        client: RepoClient,
        pr: PullState,
        runs: dict[str, int],
        diff_elsewhere: str | None = None,  # where the whole rendered diff is kept (the Action's)
        layout: CheckRunLayout = ONE_RUN,
    ) -> None:
        self.diff_elsewhere = diff_elsewhere
        self.client, self.pr, self.runs, self.layout = client, pr, runs, layout
        self.conclusion = "neutral"

    def publish(self, result: ReviewResult) -> None:
        outputs = check_run_outputs(result.report, REGISTRY.sections(), self.layout)
        self.complete_runs(outputs)
        self.converse(result)
        self.conclusion = worst(o.conclusion for o in outputs)

    def complete_runs(self, outputs: Sequence[CheckRunOutput]) -> None:
        client, runs = self.client, self.runs
        extra = [o.name for o in outputs if o.name not in runs]
        if extra:
            runs.update(client.begin_check_runs(self.pr.head_sha, extra))
        for out in outputs:
            client.complete_check_run(runs[out.name], out)
            del runs[out.name]  # only once GitHub has it: a failed one is completed as failed
        for name, run_id in runs.items():  # a check the config turned off since the runs began
            client.complete_check_run(run_id, failed_output(name, "this check is disabled"))

    def converse(self, result: ReviewResult, footer: str | None = None) -> None:
        """Inline comments on the lines the PR added at head, then the summary comment, last, so
        that the summary naming this head means the whole review is out. `footer`: where the
        details are, when no check run holds them."""
        client, pr, report = self.client, self.pr, result.report
        changed = {c.path: c.added_lines for c in result.context.changes if c.added_lines}
        if has_inline(report, changed):  # else there is nothing to post or edit: no read
            plan = inline_plan(report, changed, client.bot_review_comments(pr.number))
            for comment_id, body in plan.edits:  # an earlier review's comment, same line and rule
                client.edit_review_comment(comment_id, body)
            if plan.new:
                client.post_review(pr.number, pr.head_sha, plan.new, REVIEW_BODY)
        sections = REGISTRY.sections()
        comment = summary_comment(report, sections, self.diff_elsewhere, self.layout, footer)
        client.upsert_summary_comment(pr.number, comment)


def failure_reason(exc: Exception) -> str:
    """One line for the check run: what went wrong, never a traceback (the log has it)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no message'}"[:500]
