import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app.logs import configure_logging, log_context, redact

TOKEN = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    out = io.StringIO()
    configure_logging("DEBUG", out)
    yield out
    root.handlers[:], root.level = handlers, level


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"token {TOKEN} expires", "token [REDACTED] expires"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        ("gho_abcdefghijklmnop and ghu_abcdefghijklmnop", "[REDACTED] and [REDACTED]"),
        ("github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"),
        ("sent Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjQyfQ.c2ln", "sent Bearer [REDACTED]"),
        ("jwt eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOjQyfQ.c2lnbmF0dXJl", "jwt [REDACTED]"),
        ("headers: Authorization: token abc123def456", "headers: Authorization: [REDACTED]"),
        (
            "{'authorization': 'Basic dXNlcjpwYXNz', 'accept': 'json'}",
            "{'authorization': '[REDACTED]', 'accept': 'json'}",
        ),
        (
            f"git fetch https://x-access-token:{TOKEN}@github.com/o/r.git",
            "git fetch https://x-access-token:[REDACTED]@github.com/o/r.git",
        ),
        ("redis://:hunter2@redis:6379/0", "redis://:[REDACTED]@redis:6379/0"),
        (
            "reviewed PR #2 at ec26c3e57ca3a959ca5aad62de7213c562f8c821",
            "reviewed PR #2 at ec26c3e57ca3a959ca5aad62de7213c562f8c821",
        ),
    ],
)
def test_redact_removes_credentials_and_keeps_the_rest(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_each_record_is_one_json_line_with_its_context(stream: io.StringIO) -> None:
    log = logging.getLogger("bot.app.jobs")
    with log_context(delivery="d-1", repo="o/r"):
        log.info("fetching")
        with log_context(pr=7, head="abc"):
            log.warning("cloning %s", f"https://x-access-token:{TOKEN}@github.com/o/r.git")
    log.debug("idle")
    first, second, third = lines(stream)
    assert first | {"time": "t"} == {
        "time": "t",
        "level": "INFO",
        "logger": "bot.app.jobs",
        "message": "fetching",
        "delivery": "d-1",
        "repo": "o/r",
    }
    assert second["message"] == "cloning https://x-access-token:[REDACTED]@github.com/o/r.git"
    assert (second["delivery"], second["repo"], second["pr"], second["head"]) == (
        "d-1",
        "o/r",
        7,
        "abc",
    )
    assert set(third) == {"time", "level", "logger", "message"}
    assert TOKEN not in stream.getvalue()


def test_exceptions_are_logged_redacted(stream: io.StringIO) -> None:
    try:
        raise RuntimeError(f"401 from GitHub with Authorization: token {TOKEN}")
    except RuntimeError:
        logging.getLogger("bot.app.github.app").exception("publish failed")
    (line,) = lines(stream)
    assert line["message"] == "publish failed"
    assert "RuntimeError: 401 from GitHub with Authorization: [REDACTED]" in line["exc"]
    assert TOKEN not in stream.getvalue()


def test_configuring_twice_keeps_one_handler(stream: io.StringIO) -> None:
    configure_logging("INFO", stream)
    logging.getLogger("x").info("once")
    assert [line["message"] for line in lines(stream)] == ["once"]
