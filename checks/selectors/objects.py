"""What the selectors check reads of each rendered object: the pod labels a workload gives its pods,
the selector an object must match pods with, the kubectl selectors in its scripts.

Read once per distinct object: profiles and sides render mostly the same YAML, which parses to the
very same mapping (bot/model/yaml/blocks.py), so a chart's Services, budgets and scripts are read once for
every render that repeats them rather than once per render."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from bot.lru import IdentityMemo
from bot.model.manifests import Document, pod_labels, pod_spec
from checks.kit.containers import containers, mapping
from checks.selectors.labels import Selector, from_label_selector, from_map, labels_of
from checks.selectors.scripts import ScriptSelector, argv_selectors, kubectl_selectors

# Objects a review's renders hold (a large chart's, across profiles and sides). Each entry keeps its
# object alive: more would hold objects the parse cache has let go, megabytes each in a chart of
# large configs (a replay of opentelemetry-collector's history grew past 800 MB at 8,192).
OBJECTS_REMEMBERED = 2048
RENDERS_REMEMBERED = 64


class ObjectReads(NamedTuple):
    kind: str
    pod_labels: Mapping[str, str] | None  # its pod template's labels, when it is a workload
    own_labels: Mapping[str, str]  # its own metadata.labels
    selector: tuple[str, Selector] | None  # (field, a non-empty selector) it must select pods with
    scripts: tuple[tuple[str, ScriptSelector], ...]  # (where, selector) of its kubectl commands
    publishes_not_ready: bool  # a Service with publishNotReadyAddresses: true


Read = tuple[Document, ObjectReads]

_READS: IdentityMemo[Mapping[str, Any], ObjectReads] = IdentityMemo(OBJECTS_REMEMBERED)
_RENDERS: IdentityMemo[tuple[Document, ...], tuple[Read, ...]] = IdentityMemo(RENDERS_REMEMBERED)
# Parts shared by objects that differ elsewhere (a Deployment whose replicas differ per profile
# keeps the same labels and selector mappings).
_LABELS: IdentityMemo[dict[Any, Any], Mapping[str, str]] = IdentityMemo(OBJECTS_REMEMBERED)
_MAP_SELECTORS: IdentityMemo[dict[Any, Any], Selector] = IdentityMemo(OBJECTS_REMEMBERED)
_LABEL_SELECTORS: IdentityMemo[dict[Any, Any], Selector | None] = IdentityMemo(OBJECTS_REMEMBERED)


def render_reads(docs: tuple[Document, ...]) -> tuple[Read, ...]:
    """Every object of a render with what the check reads of it."""
    return _RENDERS.get_or_make(docs, lambda d: tuple((doc, reads(doc)) for doc in d))


def reads(doc: Document) -> ObjectReads:
    found = _READS.get_or_make(doc.body, lambda _: _read(doc))
    # The kind comes from the body, so a remembered body has it; anything else is read afresh.
    return found if found.kind == doc.kind else _read(doc)


def _read(doc: Document) -> ObjectReads:
    spec = mapping(doc.body, "spec")
    workload = pod_spec(doc)
    return ObjectReads(
        kind=doc.kind,
        pod_labels=_labels(pod_labels(doc)) if workload is not None else None,
        own_labels=_labels(mapping(doc.body, "metadata").get("labels")),
        selector=_selector(doc, spec, workload),
        scripts=_scripts(doc, workload),
        publishes_not_ready=doc.kind == "Service" and spec.get("publishNotReadyAddresses") is True,
    )


def _selector(
    doc: Document, spec: Mapping[str, Any], workload: Mapping[str, Any] | None
) -> tuple[str, Selector] | None:
    if doc.kind == "Service" and spec.get("type") != "ExternalName":
        selector: Selector | None = _map_selector(spec.get("selector"))
        field = "spec.selector"
    elif doc.kind == "PodDisruptionBudget":
        selector, field = _label_selector(spec.get("selector")), "spec.selector"
    elif doc.kind == "NetworkPolicy":
        selector, field = _label_selector(spec.get("podSelector")), "spec.podSelector"
    elif doc.kind != "CronJob" and workload is not None and "selector" in spec:
        selector, field = _label_selector(spec.get("selector")), "spec.selector"
    else:
        return None
    # An empty selector selects every pod (or, on a Service, means "no selector").
    return (field, selector) if selector else None


def _scripts(
    doc: Document, workload: Mapping[str, Any] | None
) -> tuple[tuple[str, ScriptSelector], ...]:
    """ConfigMap values, then containers' command and args."""
    found: list[tuple[str, ScriptSelector]] = []
    if doc.kind == "ConfigMap":
        for key, value in sorted(mapping(doc.body, "data").items()):
            for selector in kubectl_selectors(value) if isinstance(value, str) else ():
                found.append((f"data key {key}", selector))
    for container in containers(workload) if workload is not None else ():
        argv = [*_words(container.body.get("command")), *_words(container.body.get("args"))]
        found += [(container.who, selector) for selector in argv_selectors(argv)]
    return tuple(found)


def _labels(node: Any) -> Mapping[str, str]:
    return _LABELS.get_or_make(node, labels_of) if isinstance(node, dict) else labels_of(node)


def _map_selector(node: Any) -> Selector:
    return _MAP_SELECTORS.get_or_make(node, from_map) if isinstance(node, dict) else from_map(node)


def _label_selector(node: Any) -> Selector | None:
    if not isinstance(node, dict):
        return from_label_selector(node)
    return _LABEL_SELECTORS.get_or_make(node, from_label_selector)


def _words(node: Any) -> list[str]:
    return [str(w) for w in node] if isinstance(node, list) else []
