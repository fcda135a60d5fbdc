"""The QoS check over a Context: base and head renders per profile, as a review sees them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.model.report import Finding, Origin, Severity
from checks.qos.check import chart_data, explain, run
from checks.qos.section import section
from tests.support.qos import CHART, context, docs, failed, render_chart, rendered, write_chart

TEMPLATE = f"{CHART}/templates/jobs-manager.yaml"
KEY = "Deployment/tracebloc/release-jobs-manager"

JOBS_MANAGER = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-jobs-manager
spec:
  selector:
    matchLabels:
      app: jobs-manager
  template:
    metadata:
      labels:
        app: jobs-manager
    spec:
%(init)s      containers:
        - name: jobs-manager
          image: tracebloc/jobs-manager:1
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
"""
INIT = """      initContainers:
        - name: wait-for-mysql
          image: busybox:1.36
          command: ["sh", "-c", "until nc -z mysql 3306; do sleep 2; done"]
          {{- with .Values.waitForMysql.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
"""
VALUES = """resources:
  requests: {cpu: 100m, memory: 256Mi}
  limits: {cpu: 500m, memory: 256Mi}
waitForMysql:
  resources: {}
"""
EKS = {"resources": {"limits": {"cpu": "100m", "memory": "256Mi"}}}  # equalises cpu
SMALL_INIT = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "10m", "memory": "16Mi"},
}
FLOOR_BLOCK = "`resources: {requests: {cpu: 10m, memory: 16Mi}, limits: {cpu: 10m, memory: 16Mi}}`"
FLOOR_RULE = (
    "requests == limits on cpu and memory; values: the floor for a container that only waits"
)


def _chart(root: Path, with_init: bool) -> tuple[Path, str]:
    template = JOBS_MANAGER % {"init": INIT if with_init else ""}
    files = {
        "Chart.yaml": "apiVersion: v2\nname: tracebloc\nversion: 1.0.0\n",
        "values.yaml": VALUES,
        "templates/jobs-manager.yaml": template,
    }
    return write_chart(root, files), template


def _renders(chart_dir: Path, init_resources: dict[str, Any] | None = None) -> dict[str, Any]:
    extra = {"waitForMysql": {"resources": init_resources}} if init_resources else {}
    return {
        "default": render_chart(chart_dir, {**extra}, "default"),
        "eks": render_chart(chart_dir, {**EKS, **extra}, "eks"),
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base_dir, base_text = _chart(tmp_path_factory.mktemp("base"), with_init=False)
    head_dir, head_text = _chart(tmp_path_factory.mktemp("head"), with_init=True)
    return {
        "base": _renders(base_dir),
        "head": _renders(head_dir),
        "fixed": _renders(head_dir, SMALL_INIT),
        "base_files": {TEMPLATE: base_text},
        "head_files": {TEMPLATE: head_text},
    }


def test_init_container_without_resources_downgrades_the_equalised_profile(
    scenario: dict[str, Any],
) -> None:
    ctx = context(
        scenario["base"], scenario["head"], scenario["base_files"], scenario["head_files"]
    )
    # The init container's `resources:` line (issue 40: the line that writes the field).
    line = scenario["head_files"][TEMPLATE].splitlines().index("          resources:") + 1
    assert run(ctx) == [
        Finding(
            check="qos",
            severity=Severity.FAILURE,
            rule="downgrade",
            title=f"{KEY} Guaranteed → Burstable on eks",
            message=(
                f"profile eks: {KEY} Guaranteed → Burstable: init container wait-for-mysql sets "
                "no resources (neither requests nor limits on cpu or memory). To restore "
                f"Guaranteed: init container wait-for-mysql {FLOOR_BLOCK} ({FLOOR_RULE})."
            ),
            chart=CHART,
            profile="eks",
            subject=KEY,
            path=TEMPLATE,
            line=line,
            origin=Origin(TEMPLATE, line, KEY, ("initContainers", 0, "resources")),
            data={
                "base": "Guaranteed",
                "head": "Burstable",
                "causes": [
                    {
                        "role": "init container",
                        "container": "wait-for-mysql",
                        "fields": [
                            "requests.cpu",
                            "requests.memory",
                            "limits.cpu",
                            "limits.memory",
                        ],
                        "text": "init container wait-for-mysql sets no resources "
                        "(neither requests nor limits on cpu or memory)",
                    }
                ],
                "fix": {
                    "restores": "Guaranteed",
                    "blocks": [
                        {
                            "container": "wait-for-mysql",
                            "role": "init container",
                            "resources": SMALL_INIT,
                            "rule": FLOOR_RULE,
                        }
                    ],
                },
            },
        )
    ]
    assert line == 19


def test_init_container_with_equal_resources_changes_nothing(scenario: dict[str, Any]) -> None:
    ctx = context(
        scenario["base"], scenario["fixed"], scenario["base_files"], scenario["head_files"]
    )
    assert run(ctx) == []


def test_chart_data_holds_every_class_per_side_and_profile(scenario: dict[str, Any]) -> None:
    ctx = context(scenario["base"], scenario["head"])
    assert chart_data(ctx) == {
        "qos": {
            "base": {"default": {KEY: "Burstable"}, "eks": {KEY: "Guaranteed"}},
            "head": {"default": {KEY: "Burstable"}, "eks": {KEY: "Burstable"}},
        }
    }


def test_section_tables_the_changes_and_counts_the_rest(scenario: dict[str, Any]) -> None:
    ctx = context(
        scenario["base"], scenario["head"], scenario["base_files"], scenario["head_files"]
    )
    text = section(run(ctx), {CHART: chart_data(ctx)})
    assert text == (
        f"**{CHART}**\n\n"
        "| profile | workload | base | head | why |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| eks | {KEY} | Guaranteed | Burstable | ❌ init container wait-for-mysql sets no "
        "resources (neither requests nor limits on cpu or memory). To restore Guaranteed: init "
        f"container wait-for-mysql {FLOOR_BLOCK} ({FLOOR_RULE}). |\n\n"
        "Unchanged: default 1 pod, eks 0 pods."
    )


def test_explain_counts_what_was_compared(scenario: dict[str, Any]) -> None:
    ctx = context(scenario["base"], {**scenario["head"], "eks": failed("eks")})
    assert explain(ctx) == [
        f"qos: {CHART} profile default: 1 pods at head, 1 with the same class at base",
        f"qos: {CHART} profile eks: not compared, a side did not render",
    ]


def test_section_without_changes() -> None:
    data = {"qos": {"base": {"p": {"A/b/c": "Burstable"}}, "head": {"p": {"A/b/c": "Burstable"}}}}
    assert section([], {CHART: data}) == (
        f"**{CHART}**\n\nNo pod changed QoS class.\n\nUnchanged: p 1 pod."
    )
    assert section([], {}) == "No pods."


# --- renders written as YAML text ---------------------------------------------------------------

APP_TEMPLATE = f"{CHART}/templates/app.yaml"


def _workload(kind: str, name: str, pod: str, template: str = APP_TEMPLATE) -> Any:
    body = f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n"
    if kind == "CronJob":
        body += "  jobTemplate:\n    spec:\n      template:\n        spec:\n"
        pod = _indent(pod, 10)
    else:
        body += "  template:\n    spec:\n"
        pod = _indent(pod, 6)
    return docs(body + pod, template), body + pod


def _indent(text: str, width: int) -> str:
    return "".join(" " * width + line + "\n" for line in text.strip("\n").splitlines())


GUARANTEED = """containers:
  - name: app
    resources: {limits: {cpu: 100m, memory: 128Mi}}
"""
BURSTABLE = """containers:
  - name: app
    resources: {requests: {cpu: 100m}}
"""
BEST_EFFORT = """containers:
  - name: app
"""


def _one(
    kind: str, base_pod: str, head_pod: str, name: str = "app", head_name: str | None = None
) -> list[Finding]:
    base_docs, base_text = _workload(kind, name, base_pod)
    head_docs, head_text = _workload(kind, head_name or name, head_pod)
    ctx = context(
        {"eks": rendered("eks", base_docs)},
        {"eks": rendered("eks", head_docs)},
        {APP_TEMPLATE: base_text},
        {APP_TEMPLATE: head_text},
    )
    return run(ctx)


def test_cronjob_downgrade_through_its_job_template() -> None:
    head = GUARANTEED + "initContainers:\n  - name: wait\n"
    [finding] = _one("CronJob", GUARANTEED, head)
    assert (finding.rule, finding.severity, finding.subject) == (
        "downgrade",
        Severity.FAILURE,
        "CronJob/tracebloc/app",
    )
    assert finding.message == (
        "profile eks: CronJob/tracebloc/app Guaranteed → Burstable: init container wait sets no "
        "resources (neither requests nor limits on cpu or memory). To restore Guaranteed: init "
        f"container wait {FLOOR_BLOCK} ({FLOOR_RULE})."
    )
    assert finding.line == 14  # `- name: wait` in the rendered template text


def test_daemonset_burstable_to_best_effort_is_a_downgrade() -> None:
    [finding] = _one("DaemonSet", BURSTABLE, BEST_EFFORT)
    assert (finding.rule, finding.severity) == ("downgrade", Severity.FAILURE)
    assert finding.message == (
        "profile eks: DaemonSet/tracebloc/app Burstable → BestEffort: container app sets no "
        "resources (neither requests nor limits on cpu or memory). To restore Burstable: "
        "container app `resources: {requests: {memory: 16Mi}}` (one request anywhere makes the pod "
        "Burstable; this is the smallest)."
    )


def test_sidecar_without_resources_downgrades() -> None:
    head = GUARANTEED + "initContainers:\n  - name: proxy\n    restartPolicy: Always\n"
    [finding] = _one("Deployment", GUARANTEED, head)
    assert finding.title == "Deployment/tracebloc/app Guaranteed → Burstable on eks"
    assert finding.data["causes"][0]["text"] == (
        "sidecar container proxy sets no resources (neither requests nor limits on cpu or memory)"
    )


def test_pod_level_resources_upgrade_is_a_notice() -> None:
    head = "resources: {limits: {cpu: '1', memory: 1Gi}}\n" + BEST_EFFORT
    [finding] = _one("Deployment", BURSTABLE, head)
    assert (finding.rule, finding.severity) == ("upgrade", Severity.NOTICE)
    assert finding.message == (
        "profile eks: Deployment/tracebloc/app Burstable → Guaranteed: at base, container app sets "
        "requests.cpu but no limits.cpu; container app sets neither requests.memory nor "
        "limits.memory."
    )


def test_same_values_in_other_notations_change_nothing() -> None:
    base = "containers:\n  - name: app\n    resources: {limits: {cpu: 250m, memory: 16Mi}}\n"
    head = "containers:\n  - name: app\n    resources: {limits: {cpu: '0.25', memory: 16777216}}\n"
    assert _one("Deployment", base, head) == []


def test_renamed_daemonset_is_one_rename() -> None:
    [finding] = _one("DaemonSet", BURSTABLE, BURSTABLE, name="agent", head_name="release-agent")
    assert finding.rule == "renamed" and finding.severity is Severity.NOTICE
    assert finding.subject == "DaemonSet/tracebloc/release-agent"
    assert finding.message == (
        "profile eks: DaemonSet/tracebloc/agent renamed to DaemonSet/tracebloc/release-agent, "
        "Burstable → Burstable."
    )
    assert finding.data == {
        "base": "Burstable",
        "head": "Burstable",
        "causes": [],
        "renamed_from": "DaemonSet/tracebloc/agent",
    }


def test_renamed_and_downgraded_is_a_downgrade() -> None:
    [finding] = _one("DaemonSet", GUARANTEED, BEST_EFFORT, name="agent", head_name="release-agent")
    assert (finding.rule, finding.severity) == ("downgrade", Severity.FAILURE)
    assert finding.title == (
        "DaemonSet/tracebloc/agent renamed to DaemonSet/tracebloc/release-agent, "
        "Guaranteed → BestEffort on eks"
    )
    assert (finding.data["base"], finding.data["head"]) == ("Guaranteed", "BestEffort")
