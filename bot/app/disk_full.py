"""A job stopped by a full disk waits for space instead of being dropped.

The receiver queued it and answered 202, so GitHub will not send it again (a redelivery of its id
is a duplicate): dropping it would leave the PR without a review until its next push. A full disk
frees, by an operator or by the caps on the render cache and the mirrors, and the job then runs.
A job waiting here holds no lease, and one whose head has moved on is skipped when it runs.
"""

from __future__ import annotations

import errno
import logging

from bot.app.jobspec import Job
from bot.app.queue import Busy, Handler
from bot.git.mirror import MirrorDiskFull

log = logging.getLogger(__name__)


def waiting_for_space(handler: Handler, delay: float) -> Handler:
    """`handler`, with a job that fails for want of disk space run again after `delay` s."""

    def run(job: Job) -> None:
        try:
            handler(job)
        except MirrorDiskFull as exc:
            raise _wait(job, str(exc), delay) from None
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            raise _wait(job, exc.strerror or str(exc), delay) from None

    return run


def _wait(job: Job, why: str, delay: float) -> Busy:
    log.warning("%s waits for disk space, again in %.0f s: %s", type(job).__name__, delay, why)
    return Busy(f"disk full: {why}", delay=delay)
