"""A QoS downgrade names the smallest resources block that restores the class, and the rule behind
its values; written back into the chart's values, the block does restore it (real Helm renders)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from bot.model.report import Finding
from checks.qos.check import run
from checks.qos.compare import classify
from tests.support.qos import CHART, context, render_chart, write_chart

TEMPLATE = f"{CHART}/templates/worker.yaml"
KEY = "Deployment/tracebloc/release-worker"
WORKER = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-worker
spec:
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      {{- with .Values.pod }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.init }}
      initContainers:
        {{- range $name, $resources := . }}
        - name: {{ $name }}
          image: busybox:1.36
          command: ["sh", "-c", "until nc -z db 5432; do sleep 2; done"]
          {{- with $resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
        {{- end }}
      {{- end }}
      containers:
        - name: worker
          image: example/worker:1
          {{- with .Values.app }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
"""
EQUAL = {"limits": {"cpu": "200m", "memory": "128Mi"}}  # requests default to the limits
WAITS = "the floor for a container that only waits"
RULE = "requests == limits on cpu and memory; "


@pytest.fixture(scope="module")
def chart_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    files = {
        "Chart.yaml": "apiVersion: v2\nname: tracebloc\nversion: 1.0.0\n",
        "values.yaml": "app: {}\n",
        "templates/worker.yaml": WORKER,
    }
    return write_chart(tmp_path_factory.mktemp("chart"), files)


def review(chart_dir: Path, base: dict[str, Any], head: dict[str, Any]) -> list[Finding]:
    ctx = context(
        {"eks": render_chart(chart_dir, base, "eks")},
        {"eks": render_chart(chart_dir, head, "eks")},
        {TEMPLATE: WORKER},
        {TEMPLATE: WORKER},
    )
    return run(ctx)


def with_fix(values: dict[str, Any], fix: dict[str, Any]) -> dict[str, Any]:
    """The head's values with every block of the finding's fix written where the chart reads it."""
    fixed = copy.deepcopy(values)
    for block in fix["blocks"]:
        if block["role"] == "pod":
            fixed["pod"] = block["resources"]
        elif block["container"] == "worker":
            fixed["app"] = block["resources"]
        else:
            fixed.setdefault("init", {})[block["container"]] = block["resources"]
    return fixed


def downgrade(chart_dir: Path, base: dict[str, Any], head: dict[str, Any]) -> Finding:
    """The one downgrade; and, with its fix applied, the base's class again and no finding."""
    (found,) = review(chart_dir, base, head)
    assert found.rule == "downgrade"
    fixed = with_fix(head, found.data["fix"])
    assert review(chart_dir, base, fixed) == []
    restored = classify(render_chart(chart_dir, fixed, "eks").documents)[KEY]
    assert restored == found.data["base"] == found.data["fix"]["restores"]
    return found


def test_an_init_container_that_only_waits_gets_the_floor(chart_dir: Path) -> None:
    found = downgrade(chart_dir, {"app": EQUAL}, {"app": EQUAL, "init": {"wait-for-db": {}}})
    floor = {"cpu": "10m", "memory": "16Mi"}
    assert found.data["fix"]["blocks"] == [
        {
            "container": "wait-for-db",
            "role": "init container",
            "resources": {"requests": floor, "limits": floor},
            "rule": RULE + "values: " + WAITS,
        }
    ]
    assert found.message.endswith(
        "To restore Guaranteed: init container wait-for-db `resources: {requests: {cpu: 10m, "
        "memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}` (requests == limits on cpu and memory; "
        "values: the floor for a container that only waits)."
    )


def test_a_container_that_lost_its_limits_gets_its_base_values_back(chart_dir: Path) -> None:
    head = {"app": {"requests": {"cpu": "100m", "memory": "64Mi"}}}
    found = downgrade(chart_dir, {"app": EQUAL}, head)
    (block,) = found.data["fix"]["blocks"]
    assert (block["container"], block["resources"], block["rule"]) == (
        "worker",
        {
            "requests": {"cpu": "200m", "memory": "128Mi"},
            "limits": {"cpu": "200m", "memory": "128Mi"},
        },
        RULE + "values: the values it had at base",
    )


def test_a_new_container_with_requests_only_uses_them_for_both(chart_dir: Path) -> None:
    requests = {"cpu": "50m", "memory": "32Mi"}
    head = {"app": EQUAL, "init": {"migrate": {"requests": requests}}}
    (block,) = downgrade(chart_dir, {"app": EQUAL}, head).data["fix"]["blocks"]
    assert (block["resources"], block["rule"]) == (
        {"requests": requests, "limits": requests},
        RULE + "values: its own request, for both",
    )


def test_each_resource_says_its_own_rule_when_they_differ(chart_dir: Path) -> None:
    """cpu's request is under its limit (the limit it is: the container may use it); memory is
    not set at all (the floor)."""
    cpu = {"requests": {"cpu": "100m"}, "limits": {"cpu": "500m"}}
    head = {"app": EQUAL, "init": {"migrate": cpu}}
    (block,) = downgrade(chart_dir, {"app": EQUAL}, head).data["fix"]["blocks"]
    both = {"cpu": "500m", "memory": "16Mi"}
    assert (block["resources"], block["rule"]) == (
        {"requests": both, "limits": both},
        RULE + "cpu: its own limit, for both; memory: " + WAITS,
    )


def test_every_culprit_container_gets_a_block(chart_dir: Path) -> None:
    head = {"app": {"requests": {"cpu": "100m"}}, "init": {"wait": {}}}
    blocks = downgrade(chart_dir, {"app": EQUAL}, head).data["fix"]["blocks"]
    assert [(b["container"], b["rule"].rpartition("; ")[2]) for b in blocks] == [
        ("worker", "values: the values it had at base"),
        ("wait", "values: " + WAITS),
    ]


def test_pod_level_resources_are_fixed_at_the_pod_level(chart_dir: Path) -> None:
    base = {"pod": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    head = {"pod": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}}
    found = downgrade(chart_dir, base, head)
    (block,) = found.data["fix"]["blocks"]
    assert (block["role"], block["container"], block["resources"]["limits"]) == (
        "pod",
        None,
        {"cpu": "1", "memory": "1Gi"},
    )
    assert "To restore Guaranteed: pod-level spec.resources `resources: {requests: {cpu: 1" in (
        found.message
    )


def test_best_effort_is_fixed_by_the_smallest_request(chart_dir: Path) -> None:
    found = downgrade(chart_dir, {"app": {"requests": {"cpu": "100m"}}}, {"app": {}})
    assert found.data["fix"] == {
        "restores": "Burstable",
        "blocks": [
            {
                "container": "worker",
                "role": "container",
                "resources": {"requests": {"memory": "16Mi"}},
                "rule": "one request anywhere makes the pod Burstable; this is the smallest",
            }
        ],
    }
    assert "To restore Burstable: container worker `resources: {requests: {memory: 16Mi}}`" in (
        found.message
    )


def test_an_upgrade_proposes_nothing(chart_dir: Path) -> None:
    (found,) = review(chart_dir, {"app": {}}, {"app": EQUAL})
    assert found.rule == "upgrade" and "fix" not in found.data
    assert "To restore" not in found.message
