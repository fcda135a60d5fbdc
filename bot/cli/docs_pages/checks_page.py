"""docs/checks.md from the registry (checks/__init__.py): every check in the order its section
and check run appear, how it runs, how it is configured, and its module's docstring, which is
where each check says what it finds."""

from __future__ import annotations

import inspect
import sys
from typing import Any

from bot.cli.docs_pages.markdown import code, table
from bot.model.check import Check
from bot.model.config import CheckConfig
from checks import REGISTRY
from checks.headings.slugs import slug

INTRO = """\
Every check a review runs, in the order the report shows them. Each is a pure function of the
review's context, switched off or re-graded in `.github/chart-review.yml` ([config.md](config.md)).

Only what the PR changed counts: a defect present at base and head alike is one notice, never a
failure, and the report folds such notices into one line per check ("8 already at base,
unchanged") over a collapsed block; a check with nothing to say prints no section. Each finding
names the profile, the workload, the container, the file and line.

Never a silent pass: a chart nothing could be checked on at head (it renders on no profile, or it
is a library chart, which renders nothing itself; the finding names the charts that depend on it)
is said first as `not-reviewed`, a warning. Its report's verdict is ⚠️, not ✅, the check run is
neutral (each check that found nothing, in the `per-check` layout), and the JSON report says why
under `charts[].not_reviewed`. A check that stops with an error on a chart (a bug, or a chart
crafted to drive it past a limit) costs only its own findings there: it is reported as a `warning`
with rule `check-crashed` naming the check, the chart and the error, and every other check still
runs."""


def body() -> str:
    parts = ["# The checks", INTRO, table(["check", "title", "runs"], [_row(c) for c in REGISTRY])]
    for check in REGISTRY:
        parts += [f"## `{check.name}`: {check.title}", _how(check), _doc(check)]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def _row(check: Check[Any]) -> tuple[str, str, str]:
    return (f"[`{check.name}`](#{_anchor(check)})", check.title, _scope(check))


def _anchor(check: Check[Any]) -> str:
    return slug(f"{check.name}: {check.title}")  # its heading's, as GitHub makes it


def _scope(check: Check[Any]) -> str:
    return "once per chart" if check.scope == "chart" else "once per review"


def _how(check: Check[Any]) -> str:
    key = check.name if check.options_top_level else f"checks.{check.name}"
    said = [f"Runs {_scope(check)}."]
    if check.quiet:
        said.append("Quiet: a section and a check run only when it found something.")
    said.append(
        f"Configured by {code(key + '.enabled')} and {code(key + '.severity')}"
        + (f", beside the rest of {code(key)}" if check.options is not CheckConfig else "")
        + "."
    )
    return "*" + " ".join(said) + "*"


def _doc(check: Check[Any]) -> str:
    """The docstring of the module that defines the check's run function."""
    module = sys.modules[check.run.__module__]
    doc = inspect.getdoc(module)
    if not doc:
        raise ValueError(f"{module.__name__} has no docstring to document the {check.name} check")
    return doc
