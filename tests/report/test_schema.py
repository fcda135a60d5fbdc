"""The JSON report's schema (bot/report/schema/report-1.json): shipped with the package, a real
report passes it, and it fails a report that lacks a key the writer always writes, carries one the
writer never writes, or gives a typed key another type; its enums are the code's own values; and the
suite's guard (tests/conftest.py) catches a report it refuses."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from bot.charts.renders import SIDES
from bot.cli.main import main
from bot.model.rendered_diff import ADDED, CHANGED, NOT_COMPARED, REMOVED, UNCHANGED
from bot.model.report import SCHEMA_VERSION, ChartSummary, Report, Severity
from bot.render.probe import AssumedCapabilities
from bot.report.schema import REPORT_SCHEMA, report_schema
from bot.versions.rule import Basis
from checks import REGISTRY
from checks.qos.classes import QoSClass
from checks.qos.pod import ROLE_APP, ROLE_INIT, ROLE_POD, ROLE_SIDECAR
from tests.support.charts import EQUAL_VALUES, chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import report_errors, validated

ROOT = Path(__file__).resolve().parents[2]
# The `equal` profile's pod loses its cpu limit: Guaranteed → Burstable, set by a values line.
CPU_UNLIMITED = EQUAL_VALUES.replace("  limits:\n    cpu: 100m\n", "  limits:\n")
CLOSED = "Additional properties are not allowed ('surprise' was unexpected)"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real review's report: a chart, its rendered diff, a QoS downgrade placed on the values
    line that caused it, with its fix."""
    root = tmp_path_factory.mktemp("schema")
    g = GitBuilder(root / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr")
    g.write("app/ci/equal-values.yaml", CPU_UNLIMITED)
    g.write("app/Chart.yaml", chart_files(version="1.0.1")["app/Chart.yaml"]).commit("burst")
    out = root / "report.json"
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    assert main([*args, "--no-open-prs", "--format", "json", "--output", str(out)]) == 1
    return validated(out.read_text())


def _downgrade(report: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in report["findings"] if (f["check"], f["rule"]) == ("qos", "downgrade"))


def test_the_package_ships_the_schema_of_the_version_it_writes() -> None:
    schema = report_schema()
    assert schema == json.loads((ROOT / "bot" / "report" / REPORT_SCHEMA).read_text())
    assert schema["properties"]["schema"] == {
        "const": SCHEMA_VERSION,
        "description": schema["properties"]["schema"]["description"],
    }
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_real_report_has_every_part_the_schema_describes(report: dict[str, Any]) -> None:
    (chart,) = report["charts"]
    assert {p["status"] for p in chart["diff"]["profiles"]} == {"changed", "unchanged"}
    assert chart["qos"]["head"]["equal"] == {"Deployment/default/release-app": "Burstable"}
    down = _downgrade(report)
    assert down["origin"]["values"]["path"] == "app/ci/equal-values.yaml"
    assert down["data"]["fix"]["restores"] == "Guaranteed"
    assert report_errors(report) == []


@pytest.mark.parametrize("key", ["schema", "base", "head", "target", "charts", "findings"])
def test_a_report_without_a_key_the_writer_always_writes_fails(
    report: dict[str, Any], key: str
) -> None:
    broken = copy.deepcopy(report)
    del broken[key]
    assert report_errors(broken) == [f"(top): '{key}' is a required property"]


@pytest.mark.parametrize(
    ("where", "at"),
    [
        (lambda r: r, "(top)"),
        (lambda r: r["charts"][0], "charts/0"),
        (lambda r: r["charts"][0]["capabilities"], "charts/0/capabilities"),
        (lambda r: r["charts"][0]["diff"]["profiles"][0], "charts/0/diff/profiles/0"),
        (lambda r: _downgrade(r), "findings/0"),
        (lambda r: _downgrade(r)["origin"], "findings/0/origin"),
        (lambda r: _downgrade(r)["origin"]["values"], "findings/0/origin/values"),
        (lambda r: _downgrade(r)["data"]["fix"], "findings/0/data/fix"),
    ],
)
def test_a_key_the_writer_never_writes_fails_where_its_keys_are_closed(
    report: dict[str, Any], where: Any, at: str
) -> None:
    broken = copy.deepcopy(report)
    where(broken)["surprise"] = 1
    assert report_errors(broken) == [f"{at}: {CLOSED}"]


def test_a_finding_s_data_is_open_but_its_typed_keys_keep_their_types(
    report: dict[str, Any],
) -> None:
    open_data = copy.deepcopy(report)
    _downgrade(open_data)["data"]["surprise"] = 1  # a check's own key: no schema change needed
    assert report_errors(open_data) == []
    typed = copy.deepcopy(report)
    _downgrade(typed)["data"]["preexisting"] = "yes"
    assert report_errors(typed) == ["findings/0/data/preexisting: 'yes' is not of type 'boolean'"]


def test_a_severity_or_version_the_schema_does_not_name_fails(report: dict[str, Any]) -> None:
    broken = copy.deepcopy(report)
    broken["schema"] = 2
    _downgrade(broken)["severity"] = "error"
    assert report_errors(broken) == [
        "findings/0/severity: 'error' is not one of ['failure', 'warning', 'notice']",
        "schema: 1 was expected",
    ]


def _enum(*path: str) -> list[str]:
    node: Any = report_schema()["$defs"]
    for step in path:
        node = node[step]
    return list(node["enum"])


def test_the_schema_s_enums_are_the_code_s_values() -> None:
    assert _enum("severity") == [str(s) for s in Severity]
    assert _enum("qos_class") == [str(c) for c in QoSClass]
    assert _enum("render_error", "properties", "side") == list(SIDES)
    statuses = [CHANGED, UNCHANGED, ADDED, REMOVED, NOT_COMPARED]
    assert _enum("profile_diff", "properties", "status") == statuses
    assert _enum("practice", "properties", "basis") == [str(b) for b in Basis]
    roles = _enum("qos_fix", "properties", "blocks", "items", "properties", "role")
    assert roles == [ROLE_APP, ROLE_INIT, ROLE_SIDECAR, ROLE_POD]


def test_the_suite_s_guard_catches_a_report_the_schema_refuses(
    _reports_refused: list[str],
) -> None:
    """Every report written in the test process is checked (tests/conftest.py): this one carries
    chart data no check gives, so it is caught, and taken off the list here."""
    given = {
        "capabilities": AssumedCapabilities(None, True, ()).to_json(),
        "diff": {"profiles": []},
        **REGISTRY.empty_chart_data(),
        "surprise": 1,
    }
    chart = ChartSummary("app", "app", "1.0.0", "1.0.1", ("default",), extra=given)
    Report("b" * 40, "a" * 40, "b" * 40, (chart,), ()).to_json_text()
    caught, _reports_refused[:] = list(_reports_refused), []
    assert caught == [f"charts/0: {CLOSED}"]
