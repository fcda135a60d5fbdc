"""The App's JSON log lines, captured: what an operator's log collector would read."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app.logs import configure_logging


class JsonLogs:
    def __init__(self, stream: io.StringIO) -> None:
        self.stream = stream

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    def about(self, delivery: str) -> list[dict[str, Any]]:
        """The lines logged while working on `delivery`."""
        return [line for line in self.lines() if line.get("delivery") == delivery]


@pytest.fixture
def json_logs() -> Iterator[JsonLogs]:
    """Every log line of this test, as `configure_logging` writes it, at INFO and above."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    stream = io.StringIO()
    configure_logging("INFO", stream)
    yield JsonLogs(stream)
    root.handlers[:], root.level = handlers, level
