"""What the version check concluded of one chart, which its findings and suggestions are made from."""

from __future__ import annotations

from dataclasses import dataclass

from bot.model.chart_files import ChartMeta
from bot.model.context import ChartRenders
from bot.versions.claims import Claim, Rival, Verdict
from bot.versions.rule import BumpRule


@dataclass(frozen=True)
class Assessment:
    chart: ChartRenders
    claim: Claim
    develop: ChartMeta | None
    develop_sha: str
    develop_label: str
    rivals: tuple[Rival, ...]
    verdict: Verdict
    practice: BumpRule | None = None  # read only for a verdict that depends on it
