"""What each check said in a review's check runs, whichever the layout: in the default one run
`chart-review`, its section's heading (`### QoS classes: 1 failure`, bot/report/one_run.py) read back
as the verdict the family's own run would have had (bot/report/bodies.py's `family_verdict`); in the
`per-check` layout, each run's conclusion. Keyed by the family's run name either way."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.report.bodies import CHECK_RUN_NAME, CHECK_RUN_PREFIX
from checks import REGISTRY
from tests.support.fakegithub.state import CheckRun

SECTION_RE = re.compile(r"^### (?P<title>.+?): (?P<headline>.+)$", re.M)
TITLES = {s.title: s.name for s in REGISTRY.sections()}
NOT_REVIEWED = "; not reviewed: "


def headline_verdict(headline: str, not_reviewed: bool = False) -> str:
    """A family's headline as its run's conclusion: a new failure fails, a warning is neutral,
    notices and findings already at base pass, unless some chart was not reviewed."""
    new = headline.split(";")[0]
    if "failure" in new:
        return "failure"
    return "neutral" if "warning" in new or not_reviewed else "success"


def sections(run: CheckRun) -> dict[str, str]:
    """The one run's headline per check family, by the family's run name."""
    return {
        CHECK_RUN_PREFIX + TITLES[m["title"]]: m["headline"]
        for m in SECTION_RE.finditer(run.summary or "")
        if m["title"] in TITLES
    }


def family_verdicts(runs: Iterable[CheckRun]) -> dict[str, str | None]:
    """Each family's verdict by its run name; the latest run of each name counts."""
    found: dict[str, str | None] = {}
    for run in sorted(runs, key=lambda r: r.id):
        if run.name != CHECK_RUN_NAME or run.status != "completed":
            found[run.name] = run.conclusion
            continue
        found[run.name] = run.conclusion
        partial = NOT_REVIEWED in (run.title or "")
        for name, headline in sections(run).items():
            found[name] = headline_verdict(headline, partial)
    return found


@dataclass(frozen=True)
class Family:
    """One check family as a reviewer reads it: its verdict, its summary and its details."""

    conclusion: str | None
    title: str  # its headline: `1 failure`, `no findings`
    summary: str
    text: str


def _part(markdown: str, heading: str) -> str:
    """From the `### ` line starting with `heading` to the next `### ` line (sections nest
    `####` findings, never `###`)."""
    lines = markdown.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), None)
    return "\n".join(lines[start:end]).strip()


def family(runs: Iterable[CheckRun], check: str) -> Family:
    """Check `check`'s part of the review: its own run (`per-check`), else its section of the
    latest `chart-review` run."""
    latest = {r.name: r for r in sorted(runs, key=lambda r: r.id)}
    own = latest.get(CHECK_RUN_PREFIX + check)
    if own is not None:
        return Family(own.conclusion, own.title or "", own.summary or "", own.text or "")
    one = latest[CHECK_RUN_NAME]
    title = next(t for t, name in TITLES.items() if name == check)
    verdict = family_verdicts([one]).get(CHECK_RUN_PREFIX + check, one.conclusion)
    summary = _part(one.summary or "", f"### {title}: ")
    headline = sections(one).get(CHECK_RUN_PREFIX + check, "")
    details = _part(one.text or "", f"### {title}")
    return Family(verdict, headline, summary, details.partition("\n\n")[2])
