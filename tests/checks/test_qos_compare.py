"""A render's pods: the memoised classes are exactly `pod_qos`'s, however specs repeat."""

from __future__ import annotations

from typing import Any

import pytest

from checks.qos.classes import pod_qos
from checks.qos.compare import clear_memo, memo_pod_qos


def spec(cpu: Any, name: str = "app", restart: str | None = None) -> dict[str, Any]:
    init = {"name": "init", "resources": {"limits": {"cpu": cpu, "memory": "1Gi"}}}
    if restart:
        init["restartPolicy"] = restart
    app = {"name": name, "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    return {"containers": [app], "initContainers": [init]}


@pytest.mark.parametrize(
    "specs",
    [
        # what YAML can load alike but Kubernetes reads apart, or the reverse
        [spec("1"), spec(1), spec(1.0), spec(True), spec("1000m")],
        [spec("500m"), spec("500m", name="other"), spec("500m", restart="Always")],
        [spec(None), spec(""), spec("bad"), spec([1])],
    ],
)
def test_memo_gives_pod_qos(specs: list[dict[str, Any]]) -> None:
    clear_memo()
    for _ in range(2):
        assert [memo_pod_qos(s) for s in specs] == [pod_qos(s) for s in specs]


def renamed_spec(app: str, init: str, cpu: Any = "500m") -> dict[str, Any]:
    """Resources with a missing limit and a malformed quantity, so that causes and bad quantities
    name the containers."""
    return {
        "containers": [{"name": app, "resources": {"requests": {"cpu": cpu, "memory": "x"}}}],
        "initContainers": [{"name": init, "resources": {"limits": {"cpu": "1"}}}],
        "resources": {"limits": {"cpu": "bad"}},
    }


@pytest.mark.parametrize(
    "names",
    [
        [("web", "init"), ("api", "setup"), ("api", "api")],  # the same resources, other names
        [("same", "same"), ("a", "b")],  # first computed for a pod whose names repeat
        [("", "init"), ("x", "")],  # empty names are names too
    ],
)
def test_a_class_computed_for_other_names_is_renamed_exactly(names: list[tuple[str, str]]) -> None:
    clear_memo()
    specs = [renamed_spec(app, init) for app, init in names]
    assert [memo_pod_qos(s) for s in specs] == [pod_qos(s) for s in specs]
    assert [c.container for c in memo_pod_qos(specs[-1]).causes if c.container is not None]


def test_specs_sharing_resources_objects_are_told_apart_by_what_else_they_hold() -> None:
    # Identical YAML parses to the very same objects, so specs share `resources` mappings; the memo
    # may find a class by those objects' identity, but only with the same roles around them.
    clear_memo()
    full = {"limits": {"cpu": "1", "memory": "1Gi"}}
    cpu_only = {"requests": {"cpu": "1"}}

    def pod(app: list[Any], init: list[Any], **extra: Any) -> dict[str, Any]:
        return {"containers": app, "initContainers": init, **extra}

    specs = [
        pod([{"name": "a", "resources": full}], [{"name": "i", "resources": cpu_only}]),
        pod(
            [{"name": "a", "resources": full}],
            [{"name": "i", "resources": cpu_only, "restartPolicy": "Always"}],
        ),
        pod([{"name": "a", "resources": full}, {"name": "i", "resources": cpu_only}], []),
        pod([{"name": "a", "resources": full}], [], resources=cpu_only),
        pod([{"name": "a", "resources": full}, "not a container"], []),
        pod([{"name": "b", "resources": full}], [{"name": "j", "resources": cpu_only}]),
    ]
    for _ in range(2):
        assert [memo_pod_qos(s) for s in specs] == [pod_qos(s) for s in specs]
