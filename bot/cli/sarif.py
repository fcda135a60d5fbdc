"""`--format sarif`: the report as SARIF 2.1.0, which GitHub code scanning (and other code-scanning
hosts) take as an upload: one rule per check and rule seen, one result per finding."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from bot import __version__
from bot.cli.annotations import finding_location, where
from bot.engine.config import CONFIG_PATH, Config
from bot.engine.report import Finding, Report, Severity

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "chart-review"
# SARIF's result levels for the report's severities.
LEVEL = {Severity.FAILURE: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}
# The key of our fingerprint in `partialFingerprints`: versioned, so that a change in what it
# hashes can never be taken for the same alert.
FINGERPRINT_KEY = "chartReviewFinding/v1"
# Relative URIs resolve against the checkout's root, as code scanning expects.
SRCROOT = "%SRCROOT%"


def rule_id(f: Finding) -> str:
    return _rule_id(f.check, f.rule)


def _rule_id(check: str, name: str) -> str:
    return f"{check}/{name}" if name else check


def fingerprint(f: Finding) -> str:
    """Names the same finding across re-runs and pushes: what it is and where, not the line (which
    moves when lines are added above) nor the message (which quotes values that change)."""
    key = [f.check, f.rule, f.chart, f.profile, f.subject, f.path]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


def rule(check: str, name: str, titles: Mapping[str, str]) -> dict[str, Any]:
    title = titles.get(check, check)
    short = f"{title}: {name}" if name else title
    override = f"{config_key(check)}.severity" + (f".{name}" if name else "")
    help_text = (
        f"Reported by chart-review's `{check}` check ({title})"
        + (f" as rule `{name}`" if name else "")
        + ". Only what the pull request changed counts: a finding present at base and head "
        f"alike is a note. `{override}` in {CONFIG_PATH} sets its severity "
        "(failure, warning or notice)."
    )
    return {
        "id": _rule_id(check, name),
        "name": name or check,
        "shortDescription": {"text": short},
        "fullDescription": {"text": help_text},
        "help": {"text": help_text},
        "properties": {"tags": ["helm", check]},
    }


def config_key(check: str) -> str:
    """Where the config file configures a check: `checks.<name>`, except the checks with their own
    top-level key (`version:`, `probes:`), as bot/engine/config.py's Config.check reads them."""
    return check if check in Config.model_fields else f"checks.{check}"


def rules(findings: Sequence[Finding], titles: Mapping[str, str]) -> list[dict[str, Any]]:
    seen = sorted({(f.check, f.rule) for f in findings})
    return [rule(check, name, titles) for check, name in seen]


def result(f: Finding, index: int) -> dict[str, Any]:
    loc = finding_location(f)
    physical: dict[str, Any] = {
        "artifactLocation": {"uri": quote(loc.path, safe="/"), "uriBaseId": SRCROOT}
    }
    if loc.line is not None:
        physical["region"] = {"startLine": loc.line}
    context = where(f)
    text = f"{f.title}\n\n{f.message}" if f.message else f.title
    return {
        "ruleId": rule_id(f),
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": f"{text}\n\n({context})" if context else text},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f)},
        "properties": {
            "check": f.check,
            "rule": f.rule,
            "severity": str(f.severity),
            "chart": f.chart,
            "profile": f.profile,
            "subject": f.subject,
        },
    }


def to_sarif(report: Report, titles: Mapping[str, str]) -> dict[str, Any]:
    """`titles`: each check's title by name, for its rules' descriptions."""
    driver_rules = rules(report.findings, titles)
    index = {r["id"]: i for i, r in enumerate(driver_rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": driver_rules,
                    }
                },
                "results": [result(f, index[rule_id(f)]) for f in report.findings],
                "columnKind": "unicodeCodePoints",
                "properties": {"base": report.base, "head": report.head, "target": report.target},
            }
        ],
    }


def sarif_text(report: Report, titles: Mapping[str, str]) -> str:
    return json.dumps(to_sarif(report, titles), indent=2) + "\n"
