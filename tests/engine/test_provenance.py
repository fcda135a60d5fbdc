"""Issue 40, items 1-2: a finding on a rendered field is on the values line the PR changed that set
it, per profile (the chart's values.yaml, a profile's values file, a parent's values for its
subchart), its template line kept as the rendered origin; a field the template writes keeps its
template line; no single cause keeps the template line and says why. Through the command line, on
real git and real Helm, with the renders counted."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.engine.provenance import MAX_MARKED_RENDERS
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from checks import REGISTRY
from tests.engine.test_review import CountingRenderer
from tests.support.gitbuilder import GitBuilder

CHART_YAML = "apiVersion: v2\nname: app\nversion: 1.0.0\n"
TEMPLATE = "app/templates/deployment.yaml"
DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-operator
    spec:
      selector:
        matchLabels: {app: operator}
      template:
        metadata:
          labels: {app: operator}
        spec:
          containers:
            - name: operator
              image: "example/operator:{{ .Values.image.tag }}"
              ports:
                - name: http
                  containerPort: 8080
              readinessProbe:
                httpGet:
                  path: /healthz
                  port: {{ .Values.probe.port }}
              resources:
                %(resources)s
    """
FROM_VALUES = "{{- toYaml .Values.resources | nindent 12 }}"
VALUES = """\
    image:
      tag: "1.0"
    probe:
      port: http
    resources:
      requests: {cpu: 100m, memory: 128Mi}
      limits: {cpu: 100m, memory: 128Mi}
    """
BASE_RESOURCES = (
    "resources:\n  requests:\n    cpu: 100m\n    memory: 128Mi\n"
    "  limits:\n    cpu: 100m\n    memory: 128Mi\n"
)

Files = Mapping[str, str]


def chart(resources: str = FROM_VALUES, values: str = VALUES, **more: str) -> dict[str, str]:
    files = {
        "app/Chart.yaml": CHART_YAML,
        "app/values.yaml": textwrap.dedent(values),
        TEMPLATE: textwrap.dedent(DEPLOYMENT) % {"resources": resources},
    }
    return {**files, **{path: textwrap.dedent(text) for path, text in more.items()}}


def pull_request(tmp_path: Path, base: Files, head: Files) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in base.items():
        g.write(path, text)
    g.commit("base").branch("pr")
    for path, text in head.items():
        g.write(path, text)
    return g.commit("the pull request")


def review_json(repo: GitBuilder, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", "pr"]
    main([*args, "--no-open-prs", "--format", "json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def only(report: Mapping[str, Any], check: str, rule: str) -> dict[str, Any]:
    [found] = [f for f in report["findings"] if (f["check"], f["rule"]) == (check, rule)]
    return dict(found)


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    hits = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[occurrence - 1]


def test_a_qos_downgrade_from_values_yaml_is_on_that_values_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = chart(values=VALUES.replace(BASE_VALUES_BLOCK, "    resources: {}\n"))
    repo = pull_request(tmp_path, chart(), head)
    f = only(review_json(repo, capsys), "qos", "downgrade")
    values_line = line_of(head["app/values.yaml"], "resources: {}")
    template_line = line_of(head[TEMPLATE], "resources:")
    assert (f["path"], f["line"]) == ("app/values.yaml", values_line)
    assert f["origin"] == {
        "path": TEMPLATE,
        "line": template_line,
        "subject": "Deployment/default/release-operator",
        "field": "containers[0].resources",
        "values": {
            "path": "app/values.yaml",
            "line": values_line,
            "key": "resources",
            "text": "resources: {}",
        },
        "note": None,
    }
    assert f["message"].startswith(
        f"`resources: {{}}` at app/values.yaml:{values_line} sets `resources` of container "
        f"operator ({TEMPLATE}:{template_line}). profile default: "
    )
    # The fix is the base's values, put back where the PR removed them, proven by a render.
    assert f["data"]["suggestion"] == {
        "path": "app/values.yaml",
        "start_line": values_line,
        "line": values_line,
        "replacement": BASE_RESOURCES,
        "verified_on": ["default"],
    }


BASE_VALUES_BLOCK = (
    "    resources:\n"
    "      requests: {cpu: 100m, memory: 128Mi}\n"
    "      limits: {cpu: 100m, memory: 128Mi}\n"
)


def test_a_qos_downgrade_from_a_profiles_values_is_on_that_profiles_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    eks = "resources:\n  limits:\n    memory: 128Mi\n"
    base = chart(**{"app/ci/eks-values.yaml": eks, "app/ci/aks-values.yaml": "{}\n"})
    head = {**base, "app/ci/eks-values.yaml": eks.replace("128Mi", "256Mi")}
    repo = pull_request(tmp_path, base, head)
    f = only(review_json(repo, capsys), "qos", "downgrade")
    assert (f["profile"], f["path"], f["line"]) == ("eks", "app/ci/eks-values.yaml", 3)
    assert f["origin"]["values"] == {
        "path": "app/ci/eks-values.yaml",
        "line": 3,
        "key": "resources.limits.memory",
        "text": "memory: 256Mi",
    }
    assert f["origin"]["line"] == line_of(head[TEMPLATE], "resources:")
    assert "suggestion" not in f["data"]  # one quantity is no whole block to write


def test_a_probe_port_from_values_is_on_that_line_with_the_declared_name_suggested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = chart(values=VALUES.replace("port: http", "port: web"))
    repo = pull_request(tmp_path, chart(), head)
    f = only(review_json(repo, capsys), "probes", "probe-port")
    assert (f["path"], f["line"]) == ("app/values.yaml", 4)
    assert f["origin"]["line"] == line_of(head[TEMPLATE], "port: {{")  # the line emitting it
    assert f["origin"]["field"] == "containers[0].readinessProbe.httpGet.port"
    assert f["data"]["suggestion"] == {
        "path": "app/values.yaml",
        "start_line": 4,
        "line": 4,
        "replacement": "  port: http\n",
        "verified_on": ["default"],
    }


def test_a_field_the_template_writes_keeps_its_literal_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The PR changes a value too (the image tag), which lands elsewhere: the downgrade is the
    template's, on the line that writes the resources, never the object's first line."""
    literal = "{limits: {cpu: 100m, memory: 128Mi}}"
    base = chart(resources=literal)
    head = chart(
        resources="{requests: {cpu: 100m}}", values=VALUES.replace('tag: "1.0"', 'tag: "1.1"')
    )
    repo = pull_request(tmp_path, base, head)
    f = only(review_json(repo, capsys), "qos", "downgrade")
    line = line_of(head[TEMPLATE], "resources:")
    assert (f["path"], f["line"]) == (TEMPLATE, line)
    assert f["origin"]["values"] is None and f["origin"]["note"] is None
    assert not f["message"].startswith("`")


SUB_TEMPLATE = "app/charts/redis/templates/redis.yaml"
REDIS = """\
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: {{ .Release.Name }}-redis
    spec:
      selector:
        matchLabels: {app: redis}
      template:
        metadata:
          labels: {app: redis}
        spec:
          containers:
            - name: redis
              image: redis:7
              resources:
                {{- toYaml .Values.resources | nindent 12 }}
    """


def test_a_subcharts_value_is_on_its_parents_values_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parent = (
        textwrap.dedent(VALUES) + "redis:\n  resources:\n    limits: {cpu: 50m, memory: 64Mi}\n"
    )
    redis = {
        "app/charts/redis/Chart.yaml": "apiVersion: v2\nname: redis\nversion: 7.0.0\n",
        "app/charts/redis/values.yaml": "resources: {}\n",
        SUB_TEMPLATE: REDIS,
    }
    base = chart(values=parent, **redis)
    emptied = parent.replace(
        "  resources:\n    limits: {cpu: 50m, memory: 64Mi}\n", "  resources: {}\n"
    )
    head = chart(values=emptied, **redis)
    repo = pull_request(tmp_path, base, head)
    f = only(review_json(repo, capsys), "qos", "downgrade")
    line = line_of(head["app/values.yaml"], "  resources: {}")
    assert (f["path"], f["line"]) == ("app/values.yaml", line)
    assert f["origin"]["path"] == SUB_TEMPLATE
    assert f["origin"]["values"]["key"] == "redis.resources"
    assert f["message"].endswith("(subchart redis)")


def test_two_keys_acting_together_keep_the_template_line_and_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = (
        "{requests: {cpu: {{ .Values.requestCpu }}, memory: 128Mi}, "
        "limits: {cpu: {{ .Values.limitCpu }}, memory: 128Mi}}"
    )
    values = textwrap.dedent(VALUES) + "requestCpu: 100m\nlimitCpu: 100m\n"
    base = chart(resources=two, values=values)
    head = chart(
        resources=two,
        values=values.replace("requestCpu: 100m", "requestCpu: 50m").replace(
            "limitCpu: 100m", "limitCpu: 200m"
        ),
    )
    repo = pull_request(tmp_path, base, head)
    f = only(review_json(repo, capsys), "qos", "downgrade")
    assert (f["path"], f["line"]) == (TEMPLATE, line_of(head[TEMPLATE], "resources:"))
    note = f["origin"]["note"]
    assert note.startswith("It stays on its template line: `requestCpu: 50m` (app/values.yaml:")
    assert "`limitCpu: 200m` (app/values.yaml:" in note and "no single one is the cause" in note
    assert f["message"].endswith(note)


def test_a_key_new_at_head_keeps_the_template_line_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    either = "{{- toYaml (.Values.operatorResources | default .Values.resources) | nindent 12 }}"
    new = "operatorResources:\n  limits: {cpu: 200m, memory: 128Mi}\n  requests: {cpu: 100m}\n"
    repo = pull_request(
        tmp_path,
        chart(resources=either),
        chart(resources=either, values=textwrap.dedent(VALUES) + new),
    )
    f = only(review_json(repo, capsys), "qos", "downgrade")
    assert f["path"] == TEMPLATE
    assert f["origin"]["note"].startswith(
        "It stays on its template line: `operatorResources:` at app/values.yaml:8, which sets "
        "this field, is new in this PR"
    )


def test_provenance_costs_one_render_per_profile_with_a_values_driven_finding(
    tmp_path: Path,
) -> None:
    """Two profiles, both downgraded by values.yaml: base and head of each (4), one marked render
    each (2), one render proving each suggestion (2). A profile with no finding costs none."""
    profiles = {"app/ci/a-values.yaml": "a: 1\n", "app/ci/b-values.yaml": "b: 1\n"}
    head = chart(values=VALUES.replace(BASE_VALUES_BLOCK, "    resources: {}\n"), **profiles)
    repo = pull_request(tmp_path, chart(**profiles), head)
    counting = CountingRenderer()
    engine = Engine(GitRepo(repo.path), counting, REGISTRY, RenderCache())
    only_qos = ReviewInput(base="develop", head="pr", only_checks=("qos",))
    report = engine.review(only_qos).report
    placed = [f for f in report.findings if f.origin is not None and f.origin.values is not None]
    assert [f.profile for f in placed] == ["a", "b"]
    assert counting.calls == 4 + 2 + 2
    assert MAX_MARKED_RENDERS >= 2
