"""docs/action-inputs.md from action.yml: every input of the GitHub Action with its default and
description, and every output, as a runner reads them."""

from __future__ import annotations

from typing import Any

import yaml

from bot.cli.docs_pages.markdown import code, plain, table
from bot.cli.docs_pages.paths import ROOT

ACTION_YML = ROOT / "action.yml"
INTRO = """\
What a workflow step `with:` may set, and what the step's outputs hold. How to use the Action
(the workflow, permissions, fork PRs, caching): [action.md](action.md)."""


def body() -> str:
    action = yaml.safe_load(ACTION_YML.read_text())
    inputs, outputs = action.get("inputs") or {}, action.get("outputs") or {}
    return "\n\n".join(
        [
            f"# The Action's inputs and outputs: `{action['name']}`",
            str(action.get("description", "")).strip(),
            INTRO,
            "## Inputs",
            table(
                ["input", "default", "meaning"],
                [(code(name), _default(spec), _said(spec)) for name, spec in inputs.items()],
            ).rstrip("\n"),
            "## Outputs",
            table(
                ["output", "meaning"], [(code(name), _said(spec)) for name, spec in outputs.items()]
            ),
        ]
    )


def _default(spec: dict[str, Any]) -> str:
    value = str(spec.get("default", ""))
    return code(value) if value else "none"


def _said(spec: dict[str, Any]) -> str:
    return plain(" ".join(str(spec.get("description", "")).split()))
