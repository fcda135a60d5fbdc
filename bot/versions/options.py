"""The version rules' options in the config file (`version:`): the version check reads them, and
so do the release board and `chart-review versions`, which apply the same rules to every open PR."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from bot.model.config import CheckConfig, Config

NAME = "version"
BumpMode = Literal["per-change", "at-release"]


class VersionConfig(CheckConfig):
    ignore: list[str] = Field(
        default_factory=list,
        description="globs (relative to the chart) whose changes need no version bump, beside "
        "`ci/**`, `tests/**`, `*.md` and `.helmignore`",
    )
    # Whether a PR that changes a chart must bump its version: what the repository declares, read
    # before anything is learned (bot/versions/policy.py). One mode, or one per chart path glob.
    bump: BumpMode | dict[str, BumpMode] | None = Field(
        default=None,
        description="`per-change` (a missing bump is a failure) or `at-release` (a notice), or a "
        'map of chart path globs to either (`{charts/legacy: at-release, "*": per-change}`); '
        "unset, read from the repository (the version rule, docs/review.md)",
    )


def version_options(config: Config) -> VersionConfig:
    return config.options(NAME, VersionConfig)
