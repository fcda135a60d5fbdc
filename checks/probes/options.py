"""The probes check's options in the config file (`probes:`, at the top level)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.model.config import CheckConfig

ProbeKind = Literal["liveness", "readiness", "startup"]


class ProbesConfig(CheckConfig):
    forbid: dict[str, list[ProbeKind]] = Field(
        default_factory=dict,
        description='probe kinds forbidden per workload pattern, e.g. `{"Deployment/*jobs-manager*": '
        "[liveness, startup]}`",
    )
