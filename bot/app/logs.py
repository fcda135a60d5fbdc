"""JSON-lines logs: one object per line, carrying the delivery, repo, PR and head being worked on,
with anything that looks like a credential removed.

The context travels in a contextvar, so the receiver and the worker set it once per delivery or
job (`with log_context(delivery=..., repo=...)`) and every line logged beneath carries it, from any
module, without passing a logger adapter around.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

REDACTED = "[REDACTED]"

# What a credential looks like in this App's world. Installation tokens are `ghs_`, personal and
# OAuth tokens `ghp_`/`gho_`/`ghu_`/`ghr_`, fine-grained tokens `github_pat_`; the App's JWT is
# three base64url parts starting `eyJ`; git remotes carry a token as `x-access-token:<token>@`.
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?)[^\r\n\"',}]+"), rf"\1{REDACTED}"),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"(?i)(x-access-token:)[^@\s]+@"), rf"\1{REDACTED}@"),
    (re.compile(r"(://[^/\s:@]*:)[^@\s/]+@"), rf"\1{REDACTED}@"),  # any URL's password
    (re.compile(r"\bgh[opsur]_[A-Za-z0-9]{8,}"), REDACTED),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{8,}"), REDACTED),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), REDACTED),
)

_context: ContextVar[dict[str, Any] | None] = ContextVar("chart_review_log_context", default=None)


def redact(text: str) -> str:
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Add `fields` (delivery, repo, pr, head; None values are skipped) to every line logged
    inside the block, on top of any context already set."""
    merged = {**current_context(), **{k: v for k, v in fields.items() if v is not None}}
    token = _context.set(merged)
    try:
        yield
    finally:
        _context.reset(token)


def current_context() -> dict[str, Any]:
    return dict(_context.get() or {})


class ContextFilter(logging.Filter):
    """Stamps the context on the record when it is made, in the thread and task that logged it,
    so a handler that formats later (or elsewhere) still has it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "log_context"):
            record.__dict__["log_context"] = current_context()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        context = getattr(record, "log_context", None)
        for name, value in (current_context() if context is None else context).items():
            line[name] = redact(value) if isinstance(value, str) else value
        if record.exc_info:
            line["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(line, default=str, ensure_ascii=False)


class _JsonHandler(logging.StreamHandler):
    """Marks the handler configure_logging installed, so a second call replaces it."""


def configure_logging(level: str | int = "INFO", stream: IO[str] | None = None) -> None:
    """Send every log record, from this project and its libraries, to `stream` (stderr) as JSON
    lines. Handlers installed by others (a test runner's, say) are left in place."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _JsonHandler)]:
        root.removeHandler(handler)
    handler = _JsonHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root.addHandler(handler)
    root.setLevel(level.upper() if isinstance(level, str) else level)
