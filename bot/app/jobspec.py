"""What the webhook receiver asks the worker to do: small frozen values, queued as the plain dicts of
`job_to_dict` and read back by `job_from_dict`.

The receiver turns a delivery into at most one Job; the worker (bot/app/jobs.py) does the work. A Job
carries only what the event said; everything else (the PR's current head, permissions, config)
is read again when the job runs, because a queued job may run minutes later.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

Command = Literal["run", "help"]


@dataclass(frozen=True)
class RepoRef:
    full_name: str  # "owner/name"
    installation_id: int
    clone_url: str  # as GitHub reports it; a local path or file:// URL in tests


@dataclass(frozen=True)
class ReviewJob:
    """Review one PR at one head. `number` None: find the open PR whose head is `head_sha` (a
    check run re-requested on a fork's branch arrives with no pull_requests)."""

    repo: RepoRef
    number: int | None
    head_sha: str
    reason: str  # the event that asked: "pull_request.opened", "check_run.rerequested", …
    delivery: str = ""
    recovered: bool = False  # re-queued after its worker died mid-run
    # How many times a job about this one's subject (job_subject) died with its worker, as the
    # reaper counted when it re-queued this one (bot/app/queue.py); at CRASH_LIMIT it is not run.
    crashes: int = 0


@dataclass(frozen=True)
class RecheckJob:
    """Something moved under the open PRs targeting `base_ref`: a push to it, or PR `closed_number`
    closed or merged. The worker re-reviews the open PRs whose verdict can have changed."""

    repo: RepoRef
    base_ref: str
    reason: str  # "push" or "pull_request.closed"
    closed_number: int | None = None
    delivery: str = ""
    recovered: bool = False
    crashes: int = 0


@dataclass(frozen=True)
class CommandJob:
    """A `/chart-review …` comment on a PR. Permission is checked by the worker, not the receiver,
    because only the API knows it."""

    repo: RepoRef
    number: int
    comment_id: int
    user: str
    command: Command
    delivery: str = ""
    recovered: bool = False
    crashes: int = 0


Job = ReviewJob | RecheckJob | CommandJob
_KINDS: dict[str, type[ReviewJob] | type[RecheckJob] | type[CommandJob]] = {
    "review": ReviewJob,
    "recheck": RecheckJob,
    "command": CommandJob,
}


def job_kind(job: Job) -> str:
    return next(kind for kind, cls in _KINDS.items() if isinstance(job, cls))


def job_subject(job: Job) -> str:
    """What the job is about, the same for every job about it: the key its worker crashes are
    counted by. A review's is its head, so a new push starts with a clean count; a command's review
    reads the head when it runs, so a command counts alone, and so does each re-check."""
    if isinstance(job, ReviewJob):
        return f"{job.repo.full_name}#{job.number}@{job.head_sha}"
    if isinstance(job, CommandJob):
        return f"{job.repo.full_name}#{job.number}/comment/{job.comment_id}"
    return f"{job.repo.full_name}@{job.base_ref}/{job.reason}/{job.delivery}"


def job_to_dict(job: Job) -> dict[str, Any]:
    """Plain JSON-safe data: the queue stores this, never a pickled object."""
    return {"kind": job_kind(job), **asdict(job)}


def job_from_dict(data: dict[str, Any]) -> Job:
    fields = dict(data)
    fields.pop("id", None)  # the queue's run id, not part of the job
    cls = _KINDS[fields.pop("kind")]
    fields["repo"] = RepoRef(**fields["repo"])
    return cls(**fields)


class JobQueue(Protocol):
    """The receiver's view of the queue (implemented in bot/app/jobs.py)."""

    def submit(self, delivery_id: str, event: str, job: Job | None) -> bool:
        """Record the delivery and enqueue `job` (None: nothing to do, but remember the delivery).
        False when the delivery id was seen before: the caller acknowledges and drops it."""
        ...

    def health(self) -> str | None:
        """None when the queue's storage answers, else the reason it does not."""
        ...

    def depth(self) -> int:
        """Jobs waiting."""
        ...
