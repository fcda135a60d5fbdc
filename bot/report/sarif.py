"""`--format sarif`: the report as SARIF 2.1.0, which GitHub code scanning (and other code-scanning
hosts) take as an upload: one rule per check and rule seen, one result per finding.

Code scanning places a result only with a region's `startLine`, so every result has one (a finding
about a chart as a whole on the Chart.yaml line it concerns, else line 1); tells a result from the
next one's alert by `partialFingerprints`, so each finding gets its own, from what it is and its
rendered origin (a finding moved to a values line keeps its alert); and keeps one analysis per
`automationDetails.id` category, so several uploads for one commit (a job per chart) each keep
theirs. GitHub's limits on an upload are named below; past them an upload is refused whole."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import bot
from bot.model.chart_files import CHART_FILE
from bot.model.config import CONFIG_PATH
from bot.model.manifests import find_line
from bot.model.report import Finding, Report, Severity
from bot.report.annotations import finding_location, where

TextAt = Callable[[str], str | None]  # a file's text at head, by repository path

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
TOOL_NAME = "chart-review"
# SARIF's result levels for the report's severities.
LEVEL = {Severity.FAILURE: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}
# The key of our fingerprint in `partialFingerprints`: versioned, so that a change in what it
# hashes can never be taken for the same alert (v2: the rendered origin and what tells two
# findings of one container apart, its probe kind, its field).
FINGERPRINT_KEY = "chartReviewFinding/v2"
# Relative URIs resolve against the checkout's root, as code scanning expects.
SRCROOT = "%SRCROOT%"
# `runs[].automationDetails.id`: the category (up to its last `/`) code scanning keeps one
# analysis per; our scope arguments make it, so a workflow reviewing each chart in its own job
# uploads each to its own category.
CATEGORY = TOOL_NAME + "/{scope}/"
DEFAULT_SCOPE = "review"
FIRST_LINE = 1  # where a finding with no line of its own sits: code scanning needs one

# GitHub code scanning's ingestion rules for an upload ("SARIF support for code scanning",
# "Troubleshooting SARIF uploads: results exceed limit"): past a maximum the upload is refused.
MAX_RUNS_PER_FILE = 20
MAX_RESULTS_PER_RUN = 25_000
SHOWN_RESULTS_PER_RUN = 5_000  # kept of them, the most severe first
MAX_RULES_PER_RUN = 25_000
MAX_TAGS_PER_RULE = 20
MAX_LOCATIONS_PER_RESULT = 1_000
MAX_UPLOAD_BYTES = 10 * 2**20  # the gzipped file
# What code scanning requires of every result: a rule it lists, a message, one physical location
# with a path relative to the repository and a start line.
REQUIRED_RESULT_FIELDS = ("ruleId", "message", "locations")


def rule_id(f: Finding) -> str:
    return _rule_id(f.check, f.rule)


def _rule_id(check: str, name: str) -> str:
    return f"{check}/{name}" if name else check


def fingerprint(f: Finding) -> str:
    """Names the same finding across re-runs and pushes: what it is (with what tells it from
    another of the same object: its container, its detail such as the probe kind, its rendered
    field) and where it renders, never its line (which moves when lines are added above), its
    message (which quotes values that change) nor the values line it is placed on."""
    origin = f.origin
    where = origin.path if origin is not None else f.path
    key = [
        f.check,
        f.rule,
        f.chart,
        f.profile,
        f.subject,
        where,
        str(f.data.get("container") or ""),
        str(f.data.get("detail") or ""),
        origin.field_text() if origin is not None else "",
    ]
    return hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]


def rule(
    check: str, name: str, titles: Mapping[str, str], keys: Mapping[str, str]
) -> dict[str, Any]:
    title = titles.get(check, check)
    short = f"{title}: {name}" if name else title
    override = f"{keys.get(check) or f'checks.{check}'}.severity" + (f".{name}" if name else "")
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


def rules(
    findings: Sequence[Finding], titles: Mapping[str, str], keys: Mapping[str, str]
) -> list[dict[str, Any]]:
    seen = sorted({(f.check, f.rule) for f in findings})
    return [rule(check, name, titles, keys) for check, name in seen]


def result(f: Finding, index: int, text: TextAt = lambda path: None) -> dict[str, Any]:
    loc = finding_location(f)
    line = loc.line if loc.line is not None else chart_line(f, loc.path, text)
    physical: dict[str, Any] = {
        "artifactLocation": {"uri": quote(loc.path, safe="/"), "uriBaseId": SRCROOT},
        "region": {"startLine": line},
    }
    context = where(f)
    message = f"{f.title}\n\n{f.message}" if f.message else f.title
    return {
        "ruleId": rule_id(f),
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": f"{message}\n\n({context})" if context else message},
        "locations": [{"physicalLocation": physical}],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f)},
        "properties": {
            "check": f.check,
            "rule": f.rule,
            "severity": str(f.severity),
            "chart": f.chart,
            "profile": f.profile,
            "subject": f.subject,
            "origin": f.origin.to_json() if f.origin is not None else None,
        },
    }


def chart_line(f: Finding, path: str, text: TextAt) -> int:
    """The line of `path` (a Chart.yaml, for a finding about its chart) that the finding concerns:
    its dependency's entry (`- name: redis`), the version for the version check; else line 1."""
    source = text(path) if path.rsplit("/", 1)[-1] == CHART_FILE else None
    sub = f.data.get("subchart")
    name = sub.get("name") if isinstance(sub, Mapping) else f.data.get("dependency")
    patterns = [rf"^\s*-\s+name:\s*[\"']?{re.escape(str(name))}[\"']?\s*$"] if name else []
    patterns += [r"^version\s*:"] if f.check == "version" else []
    for pattern in patterns:
        found = find_line(source, pattern)
        if found is not None:
            return found
    return FIRST_LINE


def category(charts: Sequence[str] = (), profiles: Sequence[str] = ()) -> str:
    """The `automationDetails.id`: one category per scope the command was asked for."""
    parts = [f"chart={c}" for c in charts] + [f"profile={p}" for p in profiles]
    return CATEGORY.format(scope=",".join(parts) or DEFAULT_SCOPE)


def to_sarif(
    report: Report,
    titles: Mapping[str, str],
    text: TextAt = lambda path: None,
    automation_id: str = CATEGORY.format(scope=DEFAULT_SCOPE),
    keys: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`titles`: each check's title by name, for its rules' descriptions; `text`: a file's text at
    head, for the Chart.yaml line a chart's finding concerns; `keys`: where the config sets each
    check's options (`checks.<name>` for a check not listed)."""
    # The report lists the worst first: past the cap, the least severe are the ones left out.
    kept = report.findings[:MAX_RESULTS_PER_RUN]
    driver_rules = rules(kept, titles, keys or {})
    index = {r["id"]: i for i, r in enumerate(driver_rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": bot.__version__,
                        "semanticVersion": bot.__version__,
                        "rules": driver_rules,
                    }
                },
                "automationDetails": {"id": automation_id},
                "results": [result(f, index[rule_id(f)], text) for f in kept],
                "columnKind": "unicodeCodePoints",
                "properties": {
                    "base": report.base,
                    "head": report.head,
                    "target": report.target,
                    "left_out": len(report.findings) - len(kept),
                },
            }
        ],
    }


def sarif_text(
    report: Report,
    titles: Mapping[str, str],
    text: TextAt = lambda path: None,
    automation_id: str = CATEGORY.format(scope=DEFAULT_SCOPE),
    keys: Mapping[str, str] | None = None,
) -> str:
    return json.dumps(to_sarif(report, titles, text, automation_id, keys), indent=2) + "\n"
