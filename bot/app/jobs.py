"""The worker: what each queued job does, from the webhook's job to the GitHub calls it makes.

Three rules keep many deliveries cheap and correct:
- a job whose head is no longer the PR's head is skipped (ten pushes in a row cost one review);
- one review per PR at a time (a lease per repository and PR, shared by every worker process);
- a head already reviewed is not reviewed again for the same kind of event (a redelivered or
  duplicated `synchronize`), while edits (base, title, description), commands, re-run buttons and
  re-checks always re-review.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from github import GithubException

from bot.app.commands import RUN, WRITERS, count, denied_answer, give_answer, help_answer
from bot.app.disk_full import waiting_for_space
from bot.app.github.app import GitHubApp, PullState, RepoClient
from bot.app.give_up import give_up
from bot.app.jobspec import CommandJob, Job, RecheckJob, RepoRef, ReviewJob
from bot.app.link_access import AuthorAccess
from bot.app.links import Installation, installation_resolver
from bot.app.logs import log_context
from bot.app.metrics import Metrics
from bot.app.queue import CRASH_LIMIT, Busy, HueyJobQueue
from bot.app.review_pull import Published, integration_branch_of, review_pull, target_config
from bot.app.settings import Settings
from bot.app.store import Lease, Store
from bot.charts.resources import Resources, Sizes
from bot.git.mirror import Mirrors
from bot.git.refs import Branch
from bot.git.repo import GitRepo
from bot.model.rivals import branch_name
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.deps.fetcher import HelmFetcher
from bot.render.deps.store import DependencyStore
from bot.render.sandbox import SandboxedHelm
from bot.report.bodies import CheckRunOutput
from bot.versions.board import board_markdown, build_board
from bot.versions.options import version_options
from bot.versions.watch import claimants, claimed_versions

log = logging.getLogger(__name__)

REVIEWED_TTL = 30 * 24 * 3600.0
RECHECK = "recheck:"
RIVAL = RECHECK + "rival"
BOARD_TITLE = "Chart version board"


SUPERSEDED = CheckRunOutput(
    name="",
    conclusion="skipped",
    title="superseded",
    summary="This review was cut short and, when it resumed, the PR had moved on to a newer head, "
    "which has its own check runs.",
    text="",
)


# The events that review a head once: what they ask is "review this head".
_ONCE_PER_HEAD = frozenset(
    f"pull_request.{action}" for action in ("opened", "synchronize", "reopened", "ready_for_review")
)


def _forced(reason: str) -> bool:
    """An edit changes what the review reads without a new head (a base, a description), and
    anything else a person or a moved branch asked for re-runs too."""
    return reason not in _ONCE_PER_HEAD


class Worker:
    def __init__(
        self,
        settings: Settings,
        github: GitHubApp,
        queue: HueyJobQueue,
        store: Store,
        metrics: Metrics | None = None,
        renderer: Renderer | None = None,
    ) -> None:
        self.github = github
        self.queue = queue
        self.store = store
        self.metrics = metrics
        # A PR's lock is renewed while held; a dead worker's PR frees within its heartbeat.
        self.lease_ttl = settings.job_heartbeat
        # Every render of a PR's chart runs in the sandbox's processes, under the configured limits.
        self.renderer = renderer or SandboxedHelm(settings.render_limits, settings.render_workers)
        # The process's pools and memos, for every job its consumer threads run, sized as its
        # render processes are; closed with its queue (make_worker).
        self.resources = Resources(Sizes.for_render_workers(settings.render_workers))
        self.mirrors = Mirrors(settings.data_dir / "mirrors", max_bytes=settings.mirrors_max_bytes)
        self.cache = RenderCache(
            settings.data_dir / "renders", max_bytes=settings.render_cache_max_bytes
        )
        # Charts' dependencies, shared by every worker process on the machine (one data dir).
        self.fetcher = HelmFetcher(DependencyStore(settings.data_dir / "dependencies"))
        # PR authors' permissions on the private repositories their PRs link, for every worker.
        self.link_access = AuthorAccess(store)

    def run(self, job: Job) -> None:
        # The worker's memos for all of the job, the review's and the board's and re-checks'.
        with self.resources.active(), log_context(delivery=job.delivery, repo=job.repo.full_name):
            try:
                if isinstance(job, ReviewJob):
                    self.review(job)
                elif isinstance(job, RecheckJob):
                    self.recheck(job)
                else:
                    self.command(job)
            except GithubException as exc:
                if self.metrics is not None:
                    self.metrics.api_error(exc.status)
                log.error("GitHub answered %s; job %s dropped", exc.status, type(job).__name__)
                raise

    # -- review --------------------------------------------------------------------------------

    def review(self, job: ReviewJob) -> None:
        client = self.github.repo(job.repo.full_name, job.repo.installation_id)
        pr = self._current(client, job)
        if pr is None:
            self._abandon(client, job)
            return
        lease = Lease(self.store, f"lock:{job.repo.full_name}#{pr.number}", self.lease_ttl)
        if not lease.acquire():
            raise Busy(f"#{pr.number} is being reviewed")
        try:
            # The head may have moved while this job waited for the lease.
            pr = self._current(client, job)
            done = f"reviewed:{job.repo.full_name}#{pr.number}:{pr.head_sha}" if pr else ""
            if pr is None:
                self._abandon(client, job)
                return
            if not _forced(job.reason) and self.store.exists(done):
                log.info("skipped: head %s already reviewed", job.head_sha[:12])
                return
            with log_context(pr=pr.number, head=pr.head_sha):
                if job.crashes >= CRASH_LIMIT:
                    give_up(client, pr.number, pr.head_sha)
                else:
                    self._review(client, job, pr)
            self.store.put(done, REVIEWED_TTL)  # given up: a redelivery must not crash it again
        finally:
            lease.release()

    def _abandon(self, client: RepoClient, job: ReviewJob) -> None:
        """A review cut short by a dead worker left runs in progress on a head that is no longer
        the PR's: close them, so that nothing spins for ever."""
        if not job.recovered:
            return
        for run_id in client.unfinished_runs(job.head_sha):
            client.complete_check_run(run_id, SUPERSEDED)

    def _current(self, client: RepoClient, job: ReviewJob) -> PullState | None:
        """The open PR this job is about, if its head is still the job's head."""
        if job.number is None:
            candidates = client.pulls_with_head(job.head_sha)
            pr = candidates[0] if candidates else None
        else:
            pr = client.pull(job.number)
        if pr is None or pr.state != "open":
            log.info("skipped: no open PR for %s", job.number or job.head_sha[:12])
            return None
        if pr.head_sha != job.head_sha:
            log.info(
                "skipped: head %s is stale; #%s is at %s",
                job.head_sha[:12],
                pr.number,
                pr.head_sha[:12],
            )
            return None
        return pr

    def _review(self, client: RepoClient, job: ReviewJob, pr: PullState) -> None:
        started = time.perf_counter()
        repo = job.repo
        git = self._sync(client, repo, [pr.head_sha, pr.base_sha])
        linked: list[GitRepo] = []
        try:
            open_prs = client.open_pulls()
            where = Installation(self.github, self.mirrors, self.link_access, repo.installation_id)
            links = installation_resolver(where, linked)
            published = review_pull(
                client,
                git,
                pr,
                open_prs,
                self.renderer,
                self.cache,
                links,
                self.fetcher,
                self.resources,
            )
            log.info("review published: %s", published.conclusion)
            self._log_not_reviewed(published)
            if not job.reason.startswith(RECHECK):  # a re-check never sets off more re-checks
                self._recheck_rivals(git, job, pr, open_prs)
            self._refresh_board(client, git, pr.base_ref, open_prs)
        finally:
            for opened in (git, *linked):
                opened.close()
        if self.metrics is not None:
            self.metrics.review_finished(published.conclusion, time.perf_counter() - started)

    def _log_not_reviewed(self, published: Published) -> None:
        """A chart the review could not look at (a dependency refused, its archive not matching
        the index, a Chart.lock out of sync) is the operator's to hear of, not only the PR's."""
        for chart in published.report.not_reviewed if published.report else ():
            log.warning("chart %s not reviewed: %s", chart.path, chart.not_reviewed)
            if self.metrics is not None:
                self.metrics.chart_not_reviewed()

    def _recheck_rivals(
        self, git: GitRepo, job: ReviewJob, pr: PullState, open_prs: Sequence[PullState]
    ) -> None:
        """When a PR's version claim changes, every open PR that claims what it claimed before or
        claims now has a verdict to update ("collides with #N" appears or goes away)."""
        key = f"claims:{job.repo.full_name}#{pr.number}"
        before = self.store.get(key)
        now = claimed_versions(git, pr.base_sha, pr.head_sha)
        self.store.put(key, REVIEWED_TTL, json.dumps(now))
        old = [tuple(c) for c in json.loads(before)] if before else []
        if before is not None and set(old) == set(now):
            return
        versions = set(old) | set(now)
        for other in claimants(git, versions, open_prs, exclude=pr.number):
            log.info("re-checking #%s: its version claim meets #%s's", other.number, pr.number)
            self.queue.enqueue(
                ReviewJob(job.repo, other.number, other.head_sha, RIVAL, job.delivery)
            )

    def _sync(self, client: RepoClient, repo: RepoRef, want: Sequence[str]) -> GitRepo:
        """The repository's mirror, fetched from where GitHub's API says it lives. Not from the
        job's clone_url: the token goes with the fetch, and a job that reached the queue some other
        way than a signed delivery must not choose where the token is sent."""
        token = self.github.installation_token(repo.installation_id)
        return self.mirrors.sync(repo.full_name, client.info().clone_url, token, want)

    # -- recheck -------------------------------------------------------------------------------

    def recheck(self, job: RecheckJob) -> None:
        """Re-review the open PRs whose version verdict the event can have changed."""
        if job.crashes >= CRASH_LIMIT:  # it has no runs of its own; the next event re-checks
            log.warning("re-check after %s dropped: it stopped its worker twice", job.reason)
            return
        client = self.github.repo(job.repo.full_name, job.repo.installation_id)
        open_prs = client.open_pulls()
        git = self._sync(client, job.repo, [p.head_sha for p in open_prs])
        try:
            if job.reason == "push":
                affected = self._after_push(client, git, job.base_ref, open_prs)
            else:
                affected = self._racers(client, git, job.closed_number, open_prs)
            self._refresh_board(client, git, job.base_ref, open_prs)
        finally:
            git.close()
        for pr in affected:
            log.info("re-checking #%s after %s", pr.number, job.reason)
            self.queue.enqueue(
                ReviewJob(job.repo, pr.number, pr.head_sha, f"{RECHECK}{job.reason}", job.delivery)
            )

    def _after_push(
        self, client: RepoClient, git: GitRepo, branch: str, open_prs: Sequence[PullState]
    ) -> list[PullState]:
        """A push to a PR's target, or to the integration branch every version is compared with."""
        develop = self._develop_branch(client, git)
        return [p for p in open_prs if branch in (p.base_ref, develop.name if develop else None)]

    def _develop_branch(self, client: RepoClient, git: GitRepo) -> Branch | None:
        return integration_branch_of(git, client.info().default_branch)

    def _racers(
        self, client: RepoClient, git: GitRepo, number: int | None, open_prs: Sequence[PullState]
    ) -> list[PullState]:
        """Open PRs that claim a chart version the closed PR claimed: one of them is now free to
        take it, or must move on."""
        closed = client.pull(number) if number is not None else None
        if closed is None or git.resolve(closed.head_sha) is None:
            return []
        claimed = claimed_versions(git, closed.base_sha, closed.head_sha)
        return claimants(git, claimed, open_prs, exclude=closed.number)

    # -- commands ------------------------------------------------------------------------------

    def command(self, job: CommandJob) -> None:
        client = self.github.repo(job.repo.full_name, job.repo.installation_id)
        if job.command == "help":  # anyone's to ask: its caps are give_answer's
            give_answer(client, self.store, job, help_answer(), self.metrics)
            return
        role = client.permission(job.user)
        if role not in WRITERS:
            give_answer(client, self.store, job, denied_answer(job, role), self.metrics)
            return
        count(self.metrics, job, RUN)
        client.react(job.comment_id, "eyes")
        pr = client.pull(job.number)
        if pr is None or pr.state != "open":
            client.reply(job.number, f"@{job.user}: this PR is not open; nothing to review.")
            return
        review = ReviewJob(job.repo, job.number, pr.head_sha, "command", job.delivery)
        self.review(replace(review, recovered=job.recovered, crashes=job.crashes))

    # -- the release board ---------------------------------------------------------------------

    def _refresh_board(
        self, client: RepoClient, git: GitRepo, base_ref: str, open_prs: Sequence[PullState]
    ) -> None:
        target = git.resolve(f"refs/heads/{base_ref}")
        config, _ = target_config(git, target) if target else (None, None)
        if config is None or not config.release_board:
            return
        develop = self._develop_branch(client, git)
        if develop is None:
            return
        prs = [p.open_pr() for p in open_prs if git.resolve(p.head_sha)]
        ignore = tuple(version_options(config).ignore)
        board = build_board(git, develop.sha, prs, ignore=ignore, branch=branch_name(develop.name))
        client.upsert_issue(BOARD_TITLE, board_markdown(board))


def make_worker(
    settings: Settings,
    github: GitHubApp,
    metrics: Metrics | None,
    clock: Callable[[], float] = time.time,
) -> HueyJobQueue:
    """A queue whose jobs this process runs (the in-process consumer of `serve`, or `worker`);
    `clock` is its store's (tests move it by hand)."""
    queue = HueyJobQueue.from_settings(settings, clock=clock)
    worker = Worker(settings, github, queue, queue.store, metrics)
    queue.handler = waiting_for_space(worker.run, settings.disk_full_retry)
    close = getattr(worker.renderer, "close", None)
    if close is not None:
        queue.on_close.append(close)  # its render processes go with the process's queue
    queue.on_close.append(worker.resources.close)  # and its threads
    return queue
