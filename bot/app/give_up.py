"""What the worker publishes instead of a review whose job stopped its worker CRASH_LIMIT times
(bot/app/queue.py counts them): running it again would most likely kill the next worker too, so
its runs are completed `neutral` with the reason, and the summary comment says the same. A new
push is a new head, with a clean count, and is reviewed as usual.
"""

from __future__ import annotations

import logging

from bot.app.github.app import RepoClient
from bot.report.bodies import SUMMARY_MARKER, CheckRunOutput

log = logging.getLogger(__name__)

# "twice": queue.CRASH_LIMIT.
GAVE_UP = (
    "could not complete: the review stopped its worker twice (out of memory or a crash); "
    "it runs again on the next push"
)
GAVE_UP_OUTPUT = CheckRunOutput(
    name="", conclusion="neutral", title="could not complete", summary=GAVE_UP, text=""
)
# The marker keeps it the one sticky summary comment, which the next review edits in place.
GAVE_UP_COMMENT = SUMMARY_MARKER + "\n## ⚠️ chart-review at `{head}`\n\n" + GAVE_UP + ".\n"


def give_up(client: RepoClient, number: int, head_sha: str) -> None:
    """Complete every run of `head_sha` still in progress, and say why on PR `number`."""
    unfinished = client.unfinished_runs(head_sha)
    log.warning(
        "gave up on head %s: its review stopped its worker twice; %d runs completed neutral",
        head_sha[:12],
        len(unfinished),
    )
    for run_id in unfinished:
        client.complete_check_run(run_id, GAVE_UP_OUTPUT)
    client.upsert_summary_comment(number, GAVE_UP_COMMENT.format(head=head_sha[:12]))
