"""GitHub's rules that its REST description states only in prose (see rest-limits.md).

The schema already enforces 50 annotations per request (`maxItems`), 65535-character
`summary`/`text` (`maxLength`) and the enums; these are the ones a validator cannot see.
Each returns the problems found, each a message GitHub-like enough to act on.
"""

from __future__ import annotations

import re
from typing import Any

MAX_PER_PAGE = 100
MAX_ANNOTATION_TITLE = 255
MAX_ANNOTATION_DETAIL_BYTES = 64 * 1024  # "message" and "raw_details": up to 64 KB each
ACTIONS_ONLY_STATUSES = ("waiting", "requested", "pending")
REVIEW_EVENTS_NEEDING_BODY = ("REQUEST_CHANGES", "COMMENT")
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def per_page_problems(query: dict[str, str]) -> list[str]:
    raw = query.get("per_page")
    if raw is not None and raw.isdigit() and int(raw) > MAX_PER_PAGE:
        return [f"per_page {raw} is above the maximum of {MAX_PER_PAGE}"]
    return []


def _annotation_problems(index: int, note: dict[str, Any]) -> list[str]:
    found = []
    if len(note.get("title") or "") > MAX_ANNOTATION_TITLE:
        found.append(f"annotations[{index}].title is longer than {MAX_ANNOTATION_TITLE}")
    for key in ("message", "raw_details"):
        if len((note.get(key) or "").encode()) > MAX_ANNOTATION_DETAIL_BYTES:
            found.append(f"annotations[{index}].{key} is larger than 64 KB")
    columns = "start_column" in note or "end_column" in note
    if columns and note.get("start_line") != note.get("end_line"):
        found.append(f"annotations[{index}]: columns are allowed only when start_line == end_line")
    return found


def check_run_problems(body: dict[str, Any], creating: bool) -> list[str]:
    found = []
    status = body.get("status")
    if creating and status == "completed" and not body.get("conclusion"):
        found.append("conclusion is required when status is completed")
    if body.get("completed_at") and not body.get("conclusion"):
        found.append("conclusion is required when completed_at is given")
    if body.get("conclusion") == "stale":
        found.append("conclusion 'stale' can only be set by GitHub")
    if status in ACTIONS_ONLY_STATUSES:
        found.append(f"status '{status}' can only be set by GitHub Actions")
    notes = (body.get("output") or {}).get("annotations") or []
    for index, note in enumerate(notes):
        found.extend(_annotation_problems(index, note))
    return found


def review_problems(body: dict[str, Any]) -> list[str]:
    event = body.get("event")
    if event in REVIEW_EVENTS_NEEDING_BODY and not body.get("body"):
        return [f"body is required when event is {event}"]
    return []


def diff_lines(patch: str, side: str) -> set[int]:
    """Line numbers a review comment may target on one side of a file's diff."""
    lines: set[int] = set()
    for match in _HUNK_RE.finditer(patch):
        old_start, old_len, new_start, new_len = match.groups()
        start, length = (old_start, old_len) if side == "LEFT" else (new_start, new_len)
        count = int(length) if length is not None else 1
        lines.update(range(int(start), int(start) + count))
    return lines
