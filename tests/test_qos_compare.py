"""A render's pods: the memoised classes are exactly `pod_qos`'s, however specs repeat."""

from __future__ import annotations

from typing import Any

import pytest

from checks.qos_class import pod_qos
from checks.qos_compare import clear_memo, memo_pod_qos


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
