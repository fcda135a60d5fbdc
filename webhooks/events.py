"""Which deliveries ask for work, and what work: event + payload → at most one Job.

Pure: no I/O, no clock, no settings. Each event owns a small route function; `route` picks one by
the `X-GitHub-Event` name. Anything the event does not say (permissions, the PR's current head,
config) is left to the worker, which reads it when the job runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from bot.app.commands import parse_command
from bot.app.jobspec import CommandJob, Job, RecheckJob, RepoRef, ReviewJob

# Draft PRs are reviewed too: authors open drafts precisely to get early feedback, and the review
# only posts check runs and one sticky comment, so it is cheap to keep current.
REVIEW_ACTIONS = frozenset({"opened", "synchronize", "reopened", "ready_for_review", "edited"})
BRANCH_PREFIX = "refs/heads/"

_TYPE_NAMES = {
    dict: "an object",
    list: "a list",
    str: "a string",
    int: "an integer",
    bool: "a boolean",
}

QUEUED = "queued"
PONG = "pong"
LOGGED = "logged"


class PayloadError(ValueError):
    """The payload lacks a field this event's route needs; the message names it by JSON path."""


@dataclass(frozen=True)
class Routed:
    job: Job | None
    outcome: str  # a short label from a fixed set: it becomes a metrics label


def ignored(why: str) -> Routed:
    return Routed(None, f"ignored: {why}")


T = TypeVar("T")


def value_at(payload: Mapping[str, Any], path: str, kind: type[T]) -> T:
    """The value at dotted `path` (a numeric part indexes a list), which must be a `kind`."""
    value: Any = payload
    parts = path.split(".")
    for depth, key in enumerate(parts):
        value = _step(value, key, ".".join(parts[:depth]), path)
    # bool is an int to Python, never to GitHub: a `true` where a number belongs is malformed.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise PayloadError(f"{path}: expected {_type_name(kind)}, found {_type_name(type(value))}")
    return cast(T, value)


def _step(value: Any, key: str, where: str, path: str) -> Any:
    if isinstance(value, list) and key.isdigit():
        found = value[int(key)] if int(key) < len(value) else None
    elif isinstance(value, Mapping):
        found = value.get(key)
    else:
        raise PayloadError(f"{where}: expected an object, found {_type_name(type(value))}")
    if found is None:
        raise PayloadError(f"{path}: missing")
    return found


def _type_name(kind: type) -> str:
    return _TYPE_NAMES.get(kind, kind.__name__)


# What an edit can change that a review reads: the base (everything), the title and the
# description (the headings check reads the references in them).
REVIEWED_EDITS = ("base", "title", "body")


def _edit_reviewed(payload: Mapping[str, Any]) -> bool:
    changes = payload.get("changes")
    return isinstance(changes, Mapping) and any(changes.get(k) is not None for k in REVIEWED_EDITS)


def repo_ref(payload: Mapping[str, Any]) -> RepoRef:
    return RepoRef(
        full_name=value_at(payload, "repository.full_name", str),
        installation_id=value_at(payload, "installation.id", int),
        clone_url=value_at(payload, "repository.clone_url", str),
    )


def is_bot(user: object) -> bool:
    # App accounts have type "Bot" and a login ending in "[bot]"; either is enough.
    if not isinstance(user, Mapping):
        return False
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


def route_pull_request(payload: Mapping[str, Any], delivery: str) -> Routed:
    action = value_at(payload, "action", str)
    if action == "closed":
        job: Job = RecheckJob(
            repo=repo_ref(payload),
            base_ref=value_at(payload, "pull_request.base.ref", str),
            reason="pull_request.closed",
            closed_number=value_at(payload, "pull_request.number", int),
            delivery=delivery,
        )
        return Routed(job, QUEUED)
    if action not in REVIEW_ACTIONS:
        return ignored("unhandled action")
    if action == "edited" and not _edit_reviewed(payload):
        return ignored("neither the base, the title nor the description changed")
    job = ReviewJob(
        repo=repo_ref(payload),
        number=value_at(payload, "pull_request.number", int),
        head_sha=value_at(payload, "pull_request.head.sha", str),
        reason=f"pull_request.{action}",
        delivery=delivery,
    )
    return Routed(job, QUEUED)


# Comment commands, and who may not give them:
# - `created`: the first line is read for a command.
# - `edited`: read only when the edit turned a first line that was not a command into one (a typo
#   fixed, "/chart-reveiw" → "/chart-review"). Editing prose around a command that already ran,
#   or an old command comment months later, must not re-run it; nor can an edit without
#   `changes.body.from` (GitHub omits it when only other fields changed).
# - any other action (`deleted`) asks for nothing.
# - a comment written or sent by a bot is never a command, whatever the action: the bot's own
#   comments quote the commands (the help reply) and its summary is edited on every review, so
#   reading them back could loop; other Apps' comments are theirs to act on.
# - review comments (on a diff line, `pull_request_review_comment`) are not read: a command is
#   addressed to the PR, and a line comment is about a line, often quoting one.
COMMENT_ACTIONS = frozenset({"created", "edited"})


def route_issue_comment(payload: Mapping[str, Any], delivery: str) -> Routed:
    action = value_at(payload, "action", str)
    if action not in COMMENT_ACTIONS:
        return ignored("unhandled action")
    if value_at(payload, "issue", dict).get("pull_request") is None:
        return ignored("not a pull request")
    if is_bot(value_at(payload, "comment.user", dict)) or is_bot(payload.get("sender")):
        return ignored("bot author")
    command = parse_command(value_at(payload, "comment.body", str))
    if command is None:
        return ignored("not a command")
    if action == "edited" and not _edit_made_command(payload):
        return ignored("edit made no new command")
    job = CommandJob(
        repo=repo_ref(payload),
        number=value_at(payload, "issue.number", int),
        comment_id=value_at(payload, "comment.id", int),
        user=value_at(payload, "comment.user.login", str),
        command=command,
        delivery=delivery,
    )
    return Routed(job, QUEUED)


def _edit_made_command(payload: Mapping[str, Any]) -> bool:
    """True when the comment's body before the edit is known and held no command."""
    changes = payload.get("changes")
    body = changes.get("body") if isinstance(changes, Mapping) else None
    before = body.get("from") if isinstance(body, Mapping) else None
    return isinstance(before, str) and parse_command(before) is None


def route_review_comment(payload: Mapping[str, Any], delivery: str) -> Routed:
    return ignored("review comment")


def _rerequested(event: str) -> Callable[[Mapping[str, Any], str], Routed]:
    """check_run and check_suite re-requests ("Re-run" in the Checks tab) carry the same facts
    under their own key."""

    def route_check(payload: Mapping[str, Any], delivery: str) -> Routed:
        if value_at(payload, "action", str) != "rerequested":
            return ignored("unhandled action")
        # Only PRs in the same repository are listed: a fork's PR arrives with an empty list,
        # and the worker finds it by head SHA.
        pulls = value_at(payload, f"{event}.pull_requests", list)
        number = value_at(payload, f"{event}.pull_requests.0.number", int) if pulls else None
        job = ReviewJob(
            repo=repo_ref(payload),
            number=number,
            head_sha=value_at(payload, f"{event}.head_sha", str),
            reason=f"{event}.rerequested",
            delivery=delivery,
        )
        return Routed(job, QUEUED)

    return route_check


def route_push(payload: Mapping[str, Any], delivery: str) -> Routed:
    ref = value_at(payload, "ref", str)
    if not ref.startswith(BRANCH_PREFIX):
        return ignored("not a branch")
    if payload.get("deleted") is True:
        return ignored("branch deleted")
    job = RecheckJob(
        repo=repo_ref(payload),
        base_ref=ref.removeprefix(BRANCH_PREFIX),
        reason="push",
        delivery=delivery,
    )
    return Routed(job, QUEUED)


def route_logged(payload: Mapping[str, Any], delivery: str) -> Routed:
    # Installations need no job: every job authenticates with the installation id it carries.
    return Routed(None, LOGGED)


def route_ping(payload: Mapping[str, Any], delivery: str) -> Routed:
    return Routed(None, PONG)


ROUTES: dict[str, Callable[[Mapping[str, Any], str], Routed]] = {
    "pull_request": route_pull_request,
    "issue_comment": route_issue_comment,
    "pull_request_review_comment": route_review_comment,
    "check_run": _rerequested("check_run"),
    "check_suite": _rerequested("check_suite"),
    "push": route_push,
    "installation": route_logged,
    "installation_repositories": route_logged,
    "ping": route_ping,
}


def route(event: str, payload: Mapping[str, Any], delivery: str) -> Routed:
    """The job a delivery asks for, if any. Raises PayloadError when a needed field is absent."""
    handler = ROUTES.get(event)
    if handler is None:
        return ignored("unhandled event")
    return handler(payload, delivery)
