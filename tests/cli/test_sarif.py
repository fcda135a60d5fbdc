"""`review --format sarif`: SARIF 2.1.0 that GitHub code scanning takes, from a real review."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from bot import __version__
from bot.cli.main import main
from bot.model.report import Finding, Origin, Report, Severity, ValuesLine
from bot.report.sarif import FINGERPRINT_KEY, MAX_RESULTS_PER_RUN, fingerprint, to_sarif
from tests.support.charts import CT_LINT_PATH, CT_LINT_WORKFLOW, chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.paths import FIXTURES
from tests.support.sarif_rules import ingestion_problems

SCHEMA = json.loads((FIXTURES / "sarif" / "sarif-schema-2.1.0.json").read_text())
BROKEN = "x: {{ .Values.a.b }}\n"
MAX = MAX_RESULTS_PER_RUN


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    """develop has chart `app`, linted by ct; `broken` adds a template that fails to render,
    without a bump."""
    g = GitBuilder(tmp_path / "repo").write(CT_LINT_PATH, CT_LINT_WORKFLOW)
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("broken").write("app/templates/broken.yaml", BROKEN).commit("break")
    return g


def sarif_of(repo: GitBuilder, head: str, tmp_path: Path, run: str = "first") -> dict[str, Any]:
    out = tmp_path / f"{run}.sarif"
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", head]
    code = main([*args, "--no-open-prs", "--format", "sarif", "--output", str(out)])
    assert code == 1  # the findings' exit status, whatever the format
    log: dict[str, Any] = json.loads(out.read_text())
    return log


def validate(log: dict[str, Any]) -> None:
    validator = jsonschema.Draft4Validator(SCHEMA)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def by_rule(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["ruleId"]: r for r in log["runs"][0]["results"]}


def test_a_real_review_is_valid_sarif_2_1_0(repo: GitBuilder, tmp_path: Path) -> None:
    log = sarif_of(repo, "broken", tmp_path)
    validate(log)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("chart-review", __version__)
    ids = [r["id"] for r in driver["rules"]]
    assert ids == ["render/head-fails", "render/not-reviewed", "version/missing-bump"]
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["help"]["text"]
    version = next(r for r in driver["rules"] if r["id"] == "version/missing-bump")
    assert version["shortDescription"]["text"] == "Chart versions: missing-bump"
    assert "`version.severity.missing-bump` in .github/chart-review.yml" in version["help"]["text"]
    render_rule = next(r for r in driver["rules"] if r["id"] == "render/head-fails")
    assert "`checks.render.severity.head-fails` in" in render_rule["help"]["text"]
    for result in run["results"]:
        # Code scanning refuses a result without a location, or one naming a rule not listed.
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    results = by_rule(log)
    render = results["render/head-fails"]
    assert render["level"] == "error"
    assert render["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "app/templates/broken.yaml", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1},
    }
    assert render["message"]["text"].startswith("app fails to render on profiles burst, equal\n")
    assert results["version/missing-bump"]["level"] == "error"


def test_a_finding_without_a_file_sits_on_its_charts_chart_yaml(
    repo: GitBuilder, tmp_path: Path
) -> None:
    result = by_rule(sarif_of(repo, "broken", tmp_path))["render/not-reviewed"]
    assert result["level"] == "warning"
    # Code scanning places no result without a start line: the chart's first, for the chart.
    assert result["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "app/Chart.yaml", "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": 1},
            }
        }
    ]


def test_fingerprints_are_the_same_on_a_rerun_and_when_lines_move(
    repo: GitBuilder, tmp_path: Path
) -> None:
    first = by_rule(sarif_of(repo, "broken", tmp_path))
    again = by_rule(sarif_of(repo, "broken", tmp_path, "again"))
    # A later push adds a line above the broken one: the alert is the same one, moved.
    repo.write("app/templates/broken.yaml", "# a comment\n" + BROKEN).commit("comment")
    moved = by_rule(sarif_of(repo, "broken", tmp_path, "moved"))
    for rule_id, result in first.items():
        prints = {r[rule_id]["partialFingerprints"][FINGERPRINT_KEY] for r in (first, again, moved)}
        assert prints == {result["partialFingerprints"][FINGERPRINT_KEY]}, rule_id
    assert moved["render/head-fails"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2
    }
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in first.values()}) == len(first)


def finding(**fields: Any) -> Finding:
    base: dict[str, Any] = {"check": "probes", "severity": Severity.NOTICE, "title": "t"}
    return Finding(**{**base, "message": "m", **fields})


def report(*findings: Finding) -> Report:
    return Report(base="b" * 40, head="h" * 40, target="t" * 40, charts=(), findings=findings)


def test_levels_uris_and_a_finding_with_no_chart() -> None:
    log = to_sarif(
        report(
            finding(severity=Severity.NOTICE, rule="port", chart="c", path="c/templates/a b.yaml"),
            finding(severity=Severity.WARNING, rule="", chart=None, path=None, line=None),
        ),
        {"probes": "Probes"},
    )
    validate(log)
    (note, warning) = log["runs"][0]["results"]
    assert (note["level"], note["ruleId"], warning["level"], warning["ruleId"]) == (
        "note",
        "probes/port",
        "warning",
        "probes",
    )
    uri = note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "c/templates/a%20b.yaml"
    # About the repository, not a chart: on the bot's config file.
    assert warning["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        ".github/chart-review.yml"
    )


def test_the_fingerprint_ignores_line_and_message_but_not_the_subject() -> None:
    one = finding(rule="port", chart="c", profile="eks", subject="Deployment/d/x", path="c/a.yaml")
    prints = [
        r["partialFingerprints"][FINGERPRINT_KEY]
        for r in to_sarif(
            report(
                one,
                replace(one, line=9, message="other words", title="x"),
                replace(one, subject="Deployment/d/y"),
            ),
            {},
        )["runs"][0]["results"]
    ]
    assert prints[0] == prints[1] != prints[2]


def test_every_result_meets_github_code_scannings_ingestion_rules(
    repo: GitBuilder, tmp_path: Path
) -> None:
    """Issue 40, item 4: a start line on every result, distinct fingerprints, an
    automationDetails id, and GitHub's limits, on a real review's upload."""
    log = sarif_of(repo, "broken", tmp_path)
    validate(log)
    assert ingestion_problems(log) == []
    assert log["runs"][0]["automationDetails"] == {"id": "chart-review/review/"}


def test_the_category_follows_the_scope_asked_for(repo: GitBuilder, tmp_path: Path) -> None:
    out = tmp_path / "scoped.sarif"
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", "broken"]
    main([*args, "--no-open-prs", "--chart", "app", "--format", "sarif", "--output", str(out)])
    log = json.loads(out.read_text())
    assert log["runs"][0]["automationDetails"] == {"id": "chart-review/chart=app/"}
    assert ingestion_problems(log) == []


PROBES = """apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{name: http, containerPort: 8080}]
          readinessProbe: {httpGet: {path: /ready, port: web}}
          livenessProbe: {httpGet: {path: /live, port: web}}
"""


def test_a_liveness_and_a_readiness_finding_on_one_container_have_their_own_fingerprints(
    repo: GitBuilder, tmp_path: Path
) -> None:
    repo.checkout("develop").branch("probes").write("app/templates/web.yaml", PROBES)
    repo.commit("probes on a port nobody declares")
    log = sarif_of(repo, "probes", tmp_path, "probes")
    ports = [r for r in log["runs"][0]["results"] if r["ruleId"] == "probes/probe-port"]
    assert len(ports) == 2
    assert len({r["partialFingerprints"][FINGERPRINT_KEY] for r in ports}) == 2
    assert ingestion_problems(log) == []


def test_a_finding_moved_to_its_values_line_keeps_its_fingerprint() -> None:
    """The fingerprint is the rendered origin's: an alert does not churn when provenance moves
    the finding from its template line to the values line that set it."""
    origin = Origin("c/templates/d.yaml", 22, "Deployment/d/x", ("containers", 0, "resources"))
    on_template = finding(
        rule="downgrade",
        chart="c",
        subject="Deployment/d/x",
        path=origin.path,
        line=22,
        origin=origin,
    )
    values = ValuesLine("c/values.yaml", 5, "resources", "resources: {}")
    on_values = replace(
        on_template, path=values.path, line=values.line, origin=replace(origin, values=values)
    )
    assert fingerprint(on_template) == fingerprint(on_values)
    assert fingerprint(on_template) != fingerprint(
        replace(on_template, origin=replace(origin, field=("containers", 1, "resources")))
    )


def test_a_chart_level_finding_sits_on_the_chart_yaml_line_it_concerns() -> None:
    chart_yaml = "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n  - name: redis\n"
    dep = finding(rule="not-reviewed", chart="c", data={"dependency": "redis"})
    other = finding(rule="added", chart="c")
    log = to_sarif(report(dep, other), {}, {"c/Chart.yaml": chart_yaml}.get)
    lines = [
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in log["runs"][0]["results"]
    ]
    assert lines == [5, 1]
    assert ingestion_problems(log) == []


def test_an_upload_over_githubs_result_cap_keeps_the_most_severe() -> None:
    many = [finding(rule="port", chart="c", subject=f"Pod/d/p{n}") for n in range(MAX + 3)]
    log = to_sarif(report(finding(severity=Severity.FAILURE, rule="x", chart="c"), *many), {})
    run = log["runs"][0]
    assert len(run["results"]) == MAX and run["results"][0]["level"] == "error"
    assert run["properties"]["left_out"] == 4
