"""The root of every error meant for a user.

Each layer raises its own subclass with a message a user can act on (the file, line, key or ref at
fault); the edge turns it into an exit status, a finding or a check run. Anything else that
escapes is a bug: the command line prints "internal error, please report" and exits 3."""

from __future__ import annotations


class ChartReviewError(Exception):
    """Something about the input (arguments, refs, config, charts) that the user can fix."""


class UsageError(ChartReviewError):
    """Bad input from the command line's arguments or the Action's inputs: one line, exit 2."""
