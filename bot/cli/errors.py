"""The command line's own error: bad arguments, said in one line with exit 2."""

from __future__ import annotations

from bot.errors import ChartReviewError


class UsageError(ChartReviewError):
    """Bad arguments: one line, exit 2."""
