"""The QoS class of a pod spec (kubelet semantics), its causes, and classify() over documents."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from checks.qos.check import CHECK, QoSClass, classify, pod_qos
from checks.qos.pod import BadQuantity
from tests.support.paths import FIXTURES
from tests.support.qos import docs

CASES: list[dict[str, Any]] = yaml.safe_load((FIXTURES / "qos_cases.yaml").read_text())


def test_fixture_ports_every_upstream_case() -> None:
    sources = [c["source"] for c in CASES]
    assert sources.count("upstream TestComputePodQOS") == 20
    assert sources.count("upstream TestCollectPodLevelResources") == 4
    assert sources.count("upstream TestCollectContainerLevelResources") == 5
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_kubelet_case(case: dict[str, Any]) -> None:
    assert pod_qos(case["spec"]).qos_class == QoSClass(case["expected"])


def _container(name: str, **resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": resources}


GUARANTEED_APP = _container(
    "app", requests={"cpu": "100m", "memory": "128Mi"}, limits={"cpu": "100m", "memory": "128Mi"}
)


def _causes(spec: dict[str, Any]) -> list[str]:
    return [c.describe() for c in pod_qos(spec).causes]


def test_guaranteed_pod_has_no_causes() -> None:
    assert _causes({"containers": [GUARANTEED_APP]}) == []


def test_init_container_without_resources_is_named() -> None:
    spec = {"containers": [GUARANTEED_APP], "initContainers": [{"name": "wait-for-mysql"}]}
    result = pod_qos(spec)
    assert result.qos_class is QoSClass.BURSTABLE
    assert [c.describe() for c in result.causes] == [
        "init container wait-for-mysql sets no resources "
        "(neither requests nor limits on cpu or memory)"
    ]
    assert result.causes[0].fields == (
        "requests.cpu",
        "requests.memory",
        "limits.cpu",
        "limits.memory",
    )


def test_sidecar_is_named_as_a_sidecar() -> None:
    sidecar = {"name": "proxy", "restartPolicy": "Always", "resources": {"limits": {"cpu": "50m"}}}
    spec = {"containers": [GUARANTEED_APP], "initContainers": [sidecar]}
    assert _causes(spec) == [
        "sidecar container proxy sets neither requests.memory nor limits.memory"
    ]


def test_each_dimension_problem_is_explained() -> None:
    app = _container(
        "app", requests={"cpu": "250m", "memory": "1Gi"}, limits={"cpu": "500m", "memory": "0"}
    )
    worker = _container("worker", requests={"cpu": "1"})
    assert _causes({"containers": [app, worker]}) == [
        "container app has requests.cpu (250m) != limits.cpu (500m)",
        "container app sets limits.memory to 0, which counts as unset",
        "container worker sets requests.cpu but no limits.cpu",
        "container worker sets neither requests.memory nor limits.memory",
    ]


def test_zero_request_under_a_limit_is_unequal() -> None:
    app = _container(
        "app", requests={"cpu": "0", "memory": "0"}, limits={"cpu": 1, "memory": "1Gi"}
    )
    assert _causes({"containers": [app]}) == [
        "container app has requests.cpu (0) != limits.cpu (1)",
        "container app has requests.memory (0) != limits.memory (1Gi)",
    ]


def test_pod_level_causes() -> None:
    spec = {
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
        "containers": [_container("app", requests={"cpu": "200m"})],
    }
    result = pod_qos(spec)
    assert result.qos_class is QoSClass.BURSTABLE
    assert [c.describe() for c in result.causes] == [
        "pod-level spec.resources has requests.cpu (200m, defaulted from the containers) "
        "!= limits.cpu (1)"
    ]


def test_pod_level_limits_missing_memory() -> None:
    spec = {"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}, "containers": [{}]}
    assert _causes(spec) == [
        "pod-level spec.resources sets neither requests.memory nor limits.memory"
    ]


def test_malformed_quantity_is_reported_not_raised() -> None:
    app = _container(
        "app", requests={"cpu": "1.5cores", "memory": "1Gi"}, limits={"cpu": 2, "memory": "1Gi"}
    )
    result = pod_qos(
        {"containers": [app], "initContainers": [_container("init", limits={"x": "?"})]}
    )
    assert result.bad_quantities == (
        BadQuantity(
            "container", "app", "requests.cpu", "1.5cores", result.bad_quantities[0].reason
        ),
        BadQuantity("init container", "init", "limits.x", "?", result.bad_quantities[1].reason),
    )
    assert result.bad_quantities[0].reason.startswith("unknown suffix 'cores'")
    # The unparseable request is unset, so it defaults to the limit: the class is still computed.
    assert result.qos_class is QoSClass.BURSTABLE


def test_non_mapping_parts_are_tolerated() -> None:
    spec = {"containers": ["junk", {"name": "a", "resources": ["x"]}], "initContainers": "no"}
    assert pod_qos(spec).qos_class is QoSClass.BEST_EFFORT


WORKLOADS = """
apiVersion: v1
kind: Pod
metadata: {name: solo}
spec:
  containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: front}
spec:
  template:
    spec:
      containers: [{name: a, resources: {requests: {cpu: 1}}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      containers: [{name: a}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  template:
    spec:
      containers: [{name: a, resources: {limits: {cpu: 100m, memory: 64Mi}}}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  template:
    spec:
      containers: [{name: a}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  template:
    spec:
      containers: [{name: a, resources: {requests: {memory: 1Gi}}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]
          initContainers: [{name: wait}]
---
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary}
spec:
  template:
    spec:
      containers: [{name: a, resources: {limits: {cpu: 1, memory: 1Gi}}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
"""


def test_classify_every_workload_kind() -> None:
    assert classify(docs(WORKLOADS, "t.yaml", "default")) == {
        "Pod/default/solo": "Guaranteed",
        "Deployment/front/web": "Burstable",
        "StatefulSet/default/db": "BestEffort",
        "DaemonSet/default/agent": "Guaranteed",
        "ReplicaSet/default/rs": "BestEffort",
        "ReplicationController/default/rc": "Burstable",
        "Job/default/migrate": "Guaranteed",
        "CronJob/default/backup": "Burstable",
        "Rollout/default/canary": "Guaranteed",
    }


def test_check_is_registered_by_its_module() -> None:
    assert (CHECK.name, CHECK.title, CHECK.scope) == ("qos", "QoS classes", "chart")
    assert CHECK.chart_data is not None and CHECK.section is not None
