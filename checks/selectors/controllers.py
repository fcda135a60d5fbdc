"""The labels a controller adds to the pods it makes, which no template renders: a Service may select
a StatefulSet's one pod by `statefulset.kubernetes.io/pod-name` (a headless per-pod Service), or a
Job's pods by `job-name`. Found on a public repository (issue 38): a per-ordinal Service was said
to select nothing, while each StatefulSet pod carries its name.

Labels whose value only the running controller knows (a hash, a uid) cannot be matched here: a
selector that needs one says nothing either way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.model.manifests import Document
from checks.selectors.labels import IN, Pod, Selector

POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"  # Kubernetes 1.28 and later
JOB_NAMES = ("job-name", "batch.kubernetes.io/job-name")
# Set by controllers to values no render knows: ReplicaSets' and StatefulSets' template hashes,
# DaemonSets' generation, Jobs' uid.
RUNTIME_KEYS = frozenset(
    {
        "pod-template-hash",
        "controller-revision-hash",
        "pod-template-generation",
        "controller-uid",
        "batch.kubernetes.io/controller-uid",
    }
)
# A StatefulSet's pods are told apart by ordinal; past this many, the rest are like the last.
MAX_ORDINALS = 64


def running_pods(doc: Document, labels: Mapping[str, str]) -> list[Pod]:
    """The pods `doc` (a workload) runs, with the labels its controller adds where they are known."""
    if doc.kind == "StatefulSet":
        return [
            Pod(doc.kind, doc.name, doc.namespace, {**labels, **_ordinal(doc.name, i)})
            for i in range(_replicas(doc.body))
        ]
    if doc.kind == "Job":
        named = dict.fromkeys(JOB_NAMES, doc.name)
        return [Pod(doc.kind, doc.name, doc.namespace, {**labels, **named})]
    return [Pod(doc.kind, doc.name, doc.namespace, labels)]


def _ordinal(name: str, i: int) -> dict[str, str]:
    return {POD_NAME: f"{name}-{i}", POD_INDEX: str(i)}


def _replicas(body: Mapping[str, Any]) -> int:
    """How many ordinals to name: spec.replicas (1 when absent, as the API defaults it; at least
    one, as a template with none still says what its pods would carry), at most MAX_ORDINALS."""
    spec = body.get("spec")
    replicas = spec.get("replicas") if isinstance(spec, Mapping) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool):
        return 1
    return min(max(replicas, 1), MAX_ORDINALS)


def runtime_only(selector: Selector) -> bool:
    """Whether the selector requires a label only a running controller gives a value to."""
    return any(r.key in RUNTIME_KEYS and r.op == IN for r in selector)
