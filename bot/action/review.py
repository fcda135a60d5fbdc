"""The action's review of its PR, published as the App publishes it (bot/app/review_pull.py): the
check run(s) begun `in_progress` first, then completed with the verdict, or `neutral` with the
reason when the review could not finish; then inline comments, then the summary comment, all
through the App's CheckRunPublisher.

Degrade, never vanish: where GitHub refuses the check runs (403: a fork's read-only token, or a
workflow without `checks: write`), the review still runs, its findings become workflow annotations,
and the comments are still tried where the token may write them; a refused comment is one notice.
The job summary, the outputs and the report files are written either way (bot/action/run.py), and
the exit status follows `fail-on`."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from github import GithubException

from bot.action.api import FORBIDDEN
from bot.action.checkout import fetch_commits
from bot.action.env import ActionInputs
from bot.action.output import print_annotations, print_notice
from bot.app.github.app import PullState, RepoClient
from bot.app.link_policy import Home, LinkOpener
from bot.app.review_pull import CheckRunPublisher, begun_runs, config_layout, failure_reason
from bot.charts.profiles import NO_OVERRIDE, ValuesOverride
from bot.engine.review import Engine, ReviewInput, ReviewResult
from bot.git.repo import GitRepo
from bot.model.config import CheckRunLayout, Config, ConfigError
from bot.model.context import OpenPR, PullRequestInfo
from bot.report.bodies import CheckRunOutput, failed_output
from bot.report.comment import NO_RUN_FOOTER
from bot.report.run_layout import check_run_outputs
from checks import REGISTRY

log = logging.getLogger(__name__)

CHECKS_REFUSED = (
    "GitHub refused to create the check run (403): give the job `permissions: checks: write`; "
    "the findings are in this step's annotations and the job summary"
)
READ_ONLY_TOKEN = (
    "the token is read-only (a fork's or Dependabot's pull_request run): the findings are in this "
    "step's annotations and the job summary"
)
COMMENTS_REFUSED = (
    "GitHub refused the PR comments (403): give the job `permissions: pull-requests: write`, "
    "or the action `comment: false`; the findings are in the job summary"
)
# Where the Action keeps the whole rendered diff, for a comment too small for it.
DIFF_ELSEWHERE = (
    "the `diff` output of the chart-review step (`chart-review-report.diff` in the job; "
    "upload it as an artifact to keep it)"
)


@dataclass(frozen=True)
class ActionReview:
    """One run of the action: what it reviews, with what, and what it may write."""

    git: GitRepo
    client: RepoClient
    pr: PullState
    inputs: ActionInputs
    engine: Engine
    read_only: bool  # a refused check run is expected (a fork's token), not a setup mistake
    links: LinkOpener  # the other repositories its references name (bot/action/links.py)
    values: ValuesOverride = NO_OVERRIDE  # the `values`, `set` and `set-string` inputs, read


def review_target(git: GitRepo, pr: PullState) -> str:
    """The tip of the PR's base branch, as the App reviews against: the checkout keeps it under
    `origin/`; the event's base commit when it has no such branch."""
    for ref in (f"refs/remotes/origin/{pr.base_ref}", f"refs/heads/{pr.base_ref}"):
        sha = git.resolve(ref)
        if sha:
            return sha
    return pr.base_sha


def other_open_prs(
    git: GitRepo, pr: PullState, open_prs: Sequence[PullState]
) -> tuple[OpenPR, ...]:
    """The other open PRs whose heads are (or, fetched by id, now are) in the checkout; a head that
    cannot be had leaves its PR out of the version race, said in the log."""
    others = [p for p in open_prs if p.number != pr.number]
    missing = set(fetch_commits(git, [p.head_sha for p in others]))
    for p in others:
        if p.head_sha in missing:
            log.warning("open PR #%s left out: its head %s is not fetchable", p.number, p.head_sha)
    return tuple(p.open_pr() for p in others if p.head_sha not in missing)


def base_config(run: ActionReview, target: str) -> tuple[Config | None, str | None]:
    try:
        return run.engine.load_config(target, run.inputs.config), None
    except ConfigError as exc:
        return None, str(exc)


def begin_runs(
    run: ActionReview, config: Config | None, layout: CheckRunLayout
) -> dict[str, int] | None:
    """The check runs, in progress; None when GitHub refuses them (403): the review goes on."""
    try:
        return run.client.begin_check_runs(run.pr.head_sha, begun_runs(config, layout))
    except GithubException as exc:
        if not refused(exc):
            raise
        if run.read_only:
            print_notice("notice", READ_ONLY_TOKEN)
        else:
            print_notice("warning", CHECKS_REFUSED)
        return None


def review_and_publish(run: ActionReview, open_prs: Sequence[PullState]) -> ReviewResult:
    target = review_target(run.git, run.pr)
    config, config_error = base_config(run, target)
    layout = config_layout(run.git, target, config, run.inputs.config)
    runs = begin_runs(run, config, layout)
    try:
        if config is None:
            raise ConfigError(config_error or run.inputs.config)
        result = run.engine.review(_review_input(run, target, open_prs, config))
    except Exception as exc:
        for name, run_id in (runs or {}).items():
            run.client.complete_check_run(run_id, failed_output(name, failure_reason(exc)))
        raise
    publisher = CheckRunPublisher(run.client, run.pr, runs or {}, DIFF_ELSEWHERE, layout)
    if runs is None:
        print_annotations(result.report)
        if not run.read_only:  # a read-only token is refused every write: nothing more is tried
            _converse(lambda: publisher.converse(result, NO_RUN_FOOTER))
    else:
        publisher.complete_runs(_outputs(publisher, result))
        _converse(lambda: publisher.converse(result))
    return result


def _outputs(publisher: CheckRunPublisher, result: ReviewResult) -> list[CheckRunOutput]:
    return check_run_outputs(result.report, REGISTRY.sections(), publisher.layout)


def _converse(publish: Callable[[], None]) -> None:
    """The inline and summary comments; GitHub refusing them (403) is one notice, not a failure:
    the check run, the annotations and the job summary already say everything."""
    try:
        publish()
    except GithubException as exc:
        if not refused(exc):
            raise
        print_notice("notice", COMMENTS_REFUSED)


def refused(exc: GithubException) -> bool:
    """A 403 for want of permission. GitHub's rate limits answer 403 too, but PyGithub's retry
    policy waits those out and, past its retries, fails with no GithubException at all."""
    return exc.status == FORBIDDEN


def _review_input(
    run: ActionReview, target: str, open_prs: Sequence[PullState], config: Config
) -> ReviewInput:
    pr = run.pr
    return ReviewInput(
        # As the App: what may be read elsewhere is the config's at base (a PR cannot widen it).
        links=run.links(Home(run.client.full_name, pr.private, pr.user), config.links),
        base=target,
        base_name=run.pr.base_ref,
        head=pr.head_sha,
        open_prs=other_open_prs(run.git, pr, open_prs),
        pr=PullRequestInfo(number=pr.number, title=pr.title, body=pr.body),
        charts=run.inputs.charts,
        profiles=run.inputs.profiles,
        config_path=run.inputs.config,
        kube_version=run.inputs.kube_version,
        api_versions=run.inputs.api_versions,
        values=run.values,
        offline=run.inputs.offline,
    )
