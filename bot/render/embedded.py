"""Helm's Go SDK in this process (helm-python-sdk). The sandbox runs it in child processes; the
demo and the tests of exact Helm behaviour call it directly."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bot.render.base import (
    dependency_failure,
    failure_from_message,
    missing_dependencies,
    values_json,
)


class EmbeddedHelm:
    """Helm's Go SDK in-process (helm-python-sdk): exact Helm semantics, no binary."""

    def __init__(self) -> None:
        import helm_python

        self._helm = helm_python
        self.version = f"helm-python-sdk/{helm_python.__version__}"

    def render(
        self, archive: bytes, values: Mapping[str, Any], release: str, namespace: str
    ) -> dict[str, str]:
        try:
            with self._helm.Chart.load_archive(archive) as chart:
                metadata = chart.metadata
                if metadata.get("dependencies"):
                    missing = missing_dependencies(metadata, chart.dependencies)
                    if missing:
                        raise dependency_failure(archive, missing)
                return chart.render(
                    values=json.loads(values_json(values)),
                    name=release,
                    namespace=namespace,
                    is_install=True,
                )
        except self._helm.HelmError as exc:
            raise failure_from_message(str(exc)) from None
