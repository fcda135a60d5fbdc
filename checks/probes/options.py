"""The probes check's options in the config file (`probes:`, at the top level)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.model.config import CheckConfig

ProbeKind = Literal["liveness", "readiness", "startup"]


class ProbesConfig(CheckConfig):
    # Probe kinds forbidden per workload pattern (`Deployment/*jobs-manager*`).
    forbid: dict[str, list[ProbeKind]] = Field(default_factory=dict)
