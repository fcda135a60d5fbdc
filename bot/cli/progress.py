"""The progress line of a long review (`--all-charts`) on stderr: a terminal only, since in a pipe or
a CI log a line per chart is noise."""

from __future__ import annotations

import sys
from collections.abc import Callable

ProgressLine = Callable[[int, int, str], None]


def chart_progress(done: int, total: int, chart: str) -> None:
    """One line, rewritten per chart rendered; a single chart needs none."""
    if total < 2 or not sys.stderr.isatty():
        return
    end = "\n" if done == total else ""
    sys.stderr.write(f"\r\x1b[2Kreview [{done}/{total}] {chart}{end}")
    sys.stderr.flush()
