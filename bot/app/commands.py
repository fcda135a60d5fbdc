"""The comment command, whole: its pattern (what the receiver routes), who may run it, its words
(the help text, the refusal to a user without permission), and how often the bot writes them.

Anyone who can comment on a PR can type a command, and each answer in words is a comment the bot
posts, so the answers are capped (docs/app.md, "Running it"):
- one help reply, and one refusal, per commenter, PR and hour (REPLY_TTL); that commenter's
  further commands in the hour get a reaction instead, of which GitHub keeps one of each kind per
  comment, so a reaction adds nothing the commenter did not write;
- PR_REPLIES replies, of either kind, per PR and hour, however many accounts ask.
A reply held back is a log line (the worker's context names the delivery) and a count in
chart_review_commands_total{command,outcome}.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Protocol, cast

from bot.app.jobspec import Command, CommandJob
from bot.app.metrics import Metrics
from bot.app.store import Store

log = logging.getLogger(__name__)

# A command is the comment's whole first line, Prow-style: anchored at the start, nothing after the
# optional sub-command but whitespace. "/chart-review please" or "/chart-review-foo" is prose.
COMMAND_RE = re.compile(r"^/chart-review(?:[ \t]+(?P<command>run|help))?[ \t]*$", re.IGNORECASE)
# Who may run it: the permissions GitHub names for a collaborator who can push.
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


def parse_command(body: str) -> Command | None:
    """The command on the comment's first line, or None when that line is not one."""
    first_line = body.split("\n", 1)[0].rstrip("\r")
    match = COMMAND_RE.match(first_line)
    if match is None:
        return None
    return cast(Command, (match["command"] or "run").lower())
