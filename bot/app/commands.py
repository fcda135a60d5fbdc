"""The comment command's words, and how often the bot writes them: the help text, the refusal to
a user without permission, and the caps on both.

Anyone who can comment on a PR can type a command, and each answer in words is a comment the bot
posts, so the answers are capped (README, "Comment commands"):
- one help reply, and one refusal, per commenter, PR and hour (REPLY_TTL); that commenter's
  further commands in the hour get a reaction instead, of which GitHub keeps one of each kind per
  comment, so a reaction adds nothing the commenter did not write;
- PR_REPLIES replies, of either kind, per PR and hour, however many accounts ask.
A reply held back is a log line (the worker's context names the delivery) and a count in
chart_review_commands_total{command,outcome}.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from bot.app.jobspec import CommandJob
from bot.app.metrics import Metrics
from bot.app.store import Store

log = logging.getLogger(__name__)

WRITERS = frozenset({"admin", "maintain", "write"})
HELP = """\
chart-review commands (write the command as the first line of a PR comment):

- `/chart-review` or `/chart-review run`: review the PR's current head again (write, maintain or admin permission).
- `/chart-review help`: this list.
"""
DENIED = (
    "@{user}: `/chart-review` re-runs the review for users with write, maintain or admin permission "
    "on {repo}; your permission is {role}, so nothing ran. A maintainer can run it for you."
)
# The caps: each commenter is answered once per PR and kind in this many seconds, and a PR gets
# at most PR_REPLIES answers in them.
REPLY_TTL = 3600.0
PR_REPLIES = 3
HELP_REACTION = "+1"  # seen; the list is in the reply above
DENIED_REACTION = "confused"

# chart_review_commands_total{outcome}: a fixed set.
RUN, ANSWERED, REFUSED, HELD_BACK = "run", "answered", "refused", "held back"


class Replier(Protocol):
    def reply(self, number: int, body: str) -> None: ...

    def react(self, comment_id: int, content: str = "eyes") -> None: ...


@dataclass(frozen=True)
class Answer:
    kind: str  # "help" or "denied": whose cap per commenter it counts against
    text: str
    reaction: str  # what the answer becomes when it is held back
    outcome: str  # counted when it is posted


def help_answer() -> Answer:
    return Answer("help", HELP, HELP_REACTION, ANSWERED)


def denied_answer(job: CommandJob, role: str) -> Answer:
    text = DENIED.format(user=job.user, repo=job.repo.full_name, role=role)
    return Answer("denied", text, DENIED_REACTION, REFUSED)


def give_answer(
    client: Replier, store: Store, job: CommandJob, answer: Answer, metrics: Metrics | None
) -> None:
    """Post `answer` on the job's PR if the caps allow it, else react to the command."""
    claimed, held_back = claim_reply(store, job, answer.kind)
    if held_back is not None:
        log.warning(
            "%s reply to @%s held back: %s; reacted %s",
            answer.kind,
            job.user,
            held_back,
            answer.reaction,
        )
        client.react(job.comment_id, answer.reaction)
        count(metrics, job, HELD_BACK)
        return
    try:
        client.reply(job.number, answer.text)
    except Exception:
        for key in claimed:  # not answered yet: the next command tries again
            store.release(key)
        raise
    count(metrics, job, answer.outcome)


def claim_reply(store: Store, job: CommandJob, kind: str) -> tuple[list[str], str | None]:
    """The claims a reply takes (the commenter's, one of the PR's), or why it is held back."""
    where = f"{job.repo.full_name}#{job.number}"
    commenter = f"{kind}:{where}:{job.user}"
    if not store.claim(commenter, REPLY_TTL):
        hours = REPLY_TTL / 3600
        return [], f"answered within {hours:g} h (one {kind} reply per commenter and PR)"
    for slot in range(PR_REPLIES):
        key = f"replies:{where}:{slot}"
        if store.claim(key, REPLY_TTL):
            return [commenter, key], None
    store.release(commenter)  # not answered: this commenter's next command may be, later
    return [], f"{where} had {PR_REPLIES} command replies within {REPLY_TTL / 3600:g} h, its cap"


def count(metrics: Metrics | None, job: CommandJob, outcome: str) -> None:
    if metrics is not None:
        metrics.command(job.command, outcome)
