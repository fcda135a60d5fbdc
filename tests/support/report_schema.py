"""Every JSON report the tests produce, held to the schema the package ships
(bot/report/schema/report-1.json), so that the schema and the writer cannot drift apart.

Two ways in, one validator:
- in this process, `watching_reports()` wraps `Report.to_json`, which every writer goes through
  (`review --format json`, the Action's report file, the replay's `changes[].report`, the demo): the
  suite's conftest turns it on for the whole session and fails a test, at its teardown, that made a
  report the schema refuses. It only reads what the writer returns: nothing the code does changes.
- from another process (the CLI or the Action run as a program), `validated()` where the test
  reads the report, as the SARIF tests hold their logs to the SARIF schema."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import jsonschema
import pytest

from bot.model.report import Report
from bot.report.schema import report_schema

SCHEMA = report_schema()
jsonschema.Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def schema_errors(validator: jsonschema.protocols.Validator, instance: Any) -> list[str]:
    """Every place `instance` breaks the schema, as `path: message`, in the document's order."""
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors]


def report_errors(report: Any) -> list[str]:
    return schema_errors(VALIDATOR, report)


def validated(report: str | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """The report (its JSON text, or parsed), once the schema admits it."""
    doc: dict[str, Any] = json.loads(report) if isinstance(report, str | bytes) else dict(report)
    errors = report_errors(doc)
    assert not errors, "the report breaks bot/report/schema/report-1.json:\n" + "\n".join(errors)
    return doc


def validated_replay(text: str) -> dict[str, Any]:
    """`replay --format json`, each change's report (null where it failed) held to the schema."""
    doc: dict[str, Any] = json.loads(text)
    for change in doc["changes"]:
        if change["report"] is not None:
            validated(change["report"])
    return doc


@contextmanager
def watching_reports() -> Iterator[list[str]]:
    """While open, every `Report.to_json` in this process is validated; what the schema refuses
    is appended to the list yielded (never raised in the writer, whose caller might catch it)."""
    refused: list[str] = []
    written = Report.to_json

    def to_json(self: Report) -> dict[str, Any]:
        out = written(self)
        refused.extend(report_errors(out))
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Report, "to_json", to_json)
        yield refused
