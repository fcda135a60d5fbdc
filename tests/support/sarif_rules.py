"""GitHub code scanning's ingestion rules for a SARIF upload, as a check a test runs on what the
command line writes: what GitHub requires of each run and result, and its limits (named in
bot/report/sarif.py), past which it refuses the upload or drops what it cannot place."""

from __future__ import annotations

import gzip
import json
from typing import Any

from bot.report.sarif import (
    MAX_LOCATIONS_PER_RESULT,
    MAX_RESULTS_PER_RUN,
    MAX_RULES_PER_RUN,
    MAX_RUNS_PER_FILE,
    MAX_TAGS_PER_RULE,
    MAX_UPLOAD_BYTES,
    REQUIRED_RESULT_FIELDS,
)


def ingestion_problems(log: dict[str, Any]) -> list[str]:
    """Every way `log` breaks an ingestion rule, in words; [] when code scanning takes it whole."""
    problems = []
    if len(gzip.compress(json.dumps(log).encode())) > MAX_UPLOAD_BYTES:
        problems.append("the upload is over its size")
    runs = log.get("runs") or []
    if not runs or len(runs) > MAX_RUNS_PER_FILE:
        problems.append(f"{len(runs)} runs")
    categories = [str((run.get("automationDetails") or {}).get("id", "")) for run in runs]
    if any(not c for c in categories) or len(set(categories)) != len(categories):
        problems.append("a run without its own automationDetails.id")
    for n, run in enumerate(runs):
        problems += [f"run {n}: {p}" for p in _run_problems(run)]
    return problems


def _run_problems(run: dict[str, Any]) -> list[str]:
    driver = run.get("tool", {}).get("driver", {})
    rules = driver.get("rules") or []
    results = run.get("results") or []
    problems = [] if driver.get("name") else ["no tool.driver.name"]
    if len(rules) > MAX_RULES_PER_RUN or len(results) > MAX_RESULTS_PER_RUN:
        problems.append(f"{len(rules)} rules, {len(results)} results")
    problems += [
        f"rule {r.get('id')}: {len(r['properties']['tags'])} tags"
        for r in rules
        if len((r.get("properties") or {}).get("tags") or []) > MAX_TAGS_PER_RULE
    ]
    ids = [r.get("id") for r in rules]
    prints: dict[str, int] = {}
    for i, result in enumerate(results):
        problems += [f"result {i}: {p}" for p in _result_problems(result, ids)]
        for key, value in (result.get("partialFingerprints") or {}).items():
            prints[f"{key}={value}"] = prints.get(f"{key}={value}", 0) + 1
    problems += [f"{n} results share the fingerprint {p}" for p, n in prints.items() if n > 1]
    return problems


def _result_problems(result: dict[str, Any], rule_ids: list[Any]) -> list[str]:
    missing = [f for f in REQUIRED_RESULT_FIELDS if not result.get(f)]
    if missing:
        return [f"no {', '.join(missing)}"]
    problems = []
    index = result.get("ruleIndex")
    if result["ruleId"] not in rule_ids or (
        index is not None and rule_ids[index] != result["ruleId"]
    ):
        problems.append(f"rule {result['ruleId']} is not the run's")
    if not str(result["message"].get("text", "")).strip():
        problems.append("an empty message")
    locations = result["locations"]
    if len(locations) > MAX_LOCATIONS_PER_RESULT:
        problems.append(f"{len(locations)} locations")
    physical = locations[0].get("physicalLocation") or {}
    uri = (physical.get("artifactLocation") or {}).get("uri", "")
    if not uri or uri.startswith("/") or "://" in uri:
        problems.append(f"uri {uri!r} is not relative to the repository")
    start = (physical.get("region") or {}).get("startLine")
    if not isinstance(start, int) or start < 1:
        problems.append("no region.startLine")
    if not result.get("partialFingerprints"):
        problems.append("no partialFingerprints")
    return problems
