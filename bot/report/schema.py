"""The JSON report's schema as a file shipped with the package, so that a consumer validates a
report against the schema of the version that wrote it."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

# The schema of `"schema": 1` (bot/model/report.py's SCHEMA_VERSION): a later version gets a file
# of its own beside it, and this one stays as it is.
REPORT_SCHEMA = "schema/report-1.json"


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the report `review --format json` writes."""
    text = files("bot.report").joinpath(REPORT_SCHEMA).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
