"""The one seam between a review and where its report goes. The command line writes markdown or
JSON (bot/cli/report_writer.py); the App completes check runs and keeps the summary and inline
comments (bot/app/review_pull.py). Both take the same `ReviewResult`, so what one says the other
can say too."""

from __future__ import annotations

from typing import Protocol

from bot.engine.review import ReviewResult


class Publisher(Protocol):
    def publish(self, result: ReviewResult) -> None: ...
