"""The bump rule for one chart: how sure the review may be that a PR changing the chart's content
must bump its version, and the words that say what the repository showed to make it so.

Three levels, as a careful reviewer would hold them: `ENFORCED` where the repository declares the
rule (its config, a CI step that fails such a PR) or every one of many recent changes bumped, so a
missing bump is a failure; `EXPECTED` where the evidence leans that way, a warning; `NOT_ENFORCED`
where versions move at release (or nothing tells), a notice."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

CONFIG_FILE = ".github/chart-review.yml"
# What every finding the rule did not come from the config says, so a repository can settle it.
HOW_TO_DECLARE = (
    f"Declare it in `{CONFIG_FILE}`: `version: {{bump: per-change}}` (or `at-release`)."
)


class Level(IntEnum):
    NOT_ENFORCED = 0
    EXPECTED = 1
    ENFORCED = 2


class Basis(StrEnum):
    """What decided the rule; the value goes into the finding's `data.practice.basis`."""

    # What the repository declares.
    CONFIG = "declared-in-config"
    CT_LINT = "ct-lint-checks-version"
    CT_OFF = "ct-check-version-increment-off"
    VERSION_GUARD = "version-guard-step"
    RELEASE_TOOLING = "release-tooling"
    CHANGELOG = "changelog-unreleased"
    # What it has released.
    UNRELEASED = "version-not-released"
    # What its history shows.
    BUMPS = "bumps-per-change"
    RELEASES = "bumps-at-release"
    PLACEHOLDER = "placeholder-version"
    TOO_FEW = "too-few-changes"
    NEVER_RELEASED = "never-released"
    NO_HISTORY = "no-history"
    HISTORY_CUT = "history-cut-short"


# The bases that come from the repository's own files: what they say stands whatever the history.
DECLARED = frozenset(
    {
        Basis.CONFIG,
        Basis.CT_LINT,
        Basis.CT_OFF,
        Basis.VERSION_GUARD,
        Basis.RELEASE_TOOLING,
        Basis.CHANGELOG,
    }
)


@dataclass(frozen=True)
class BumpRule:
    level: Level
    basis: Basis
    said: str  # one sentence: what the repository showed ("ct lint runs on this chart ...")
    source: str | None = None  # the file (and line) that declares it
    changes: int = 0  # the recent content changes counted, where the history was read
    bumped: int = 0  # those that bumped the version themselves
    releases: int = 0  # the commits among them that only moved the version (release commits)

    @property
    def enforced(self) -> bool:
        return self.level is Level.ENFORCED

    @property
    def declared_in_config(self) -> bool:
        return self.basis is Basis.CONFIG

    def sentence(self) -> str:
        """What the finding says of the rule: what was read, and how to declare it where the
        config does not."""
        if self.declared_in_config or self.level is Level.ENFORCED:
            return self.said
        return f"{self.said} {HOW_TO_DECLARE}"

    def to_json(self) -> dict[str, Any]:
        return {
            "basis": str(self.basis),
            "enforced": self.enforced,
            "level": ("notice", "warning", "failure")[self.level],
            "declared": self.basis in DECLARED,
            "source": self.source,
            "changes": self.changes,
            "bumped": self.bumped,
            "releases": self.releases,
        }
