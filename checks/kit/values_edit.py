"""A values edit as a suggested change: the key that set a finding's field (the engine found it,
`finding.origin.values`) given another value, in the file's own indentation.

Written as the file writes it: a scalar in place (quotes and comment kept); a mapping as a block
under the key, indented one step deeper than the key. The engine proves the edit as any other
(bot/engine/suggestions.py), and GitHub takes it only on lines the PR added (checks/kit/suggest.py)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

import yaml

from bot.lru import BoundedCache
from bot.model.context import ChartContext
from bot.model.report import Finding, ValuesLine
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from bot.textlines import git_lines
from checks.kit.suggest import block_end, indent, propose, with_value

# `key:` at the start of a line of a values file (not a list item's: `- name:` edits are not ours).
_KEY = re.compile(r"^(?P<lead> *)(?P<key>[\"']?[^\s\"'#:{}\[\],-][^\"'#:]*?[\"']?)[ \t]*:(?=\s|$)")
STEP = 2  # the indentation step when the file does not show its own
# Parsed values files by their text's digest: read-only, a review's few.
_PARSED: BoundedCache[str, tuple[Any]] = BoundedCache(16)


def values_line(f: Finding) -> ValuesLine | None:
    return f.origin.values if f.origin is not None else None


def base_value(ctx: ChartContext, at: ValuesLine) -> Any:
    """The base's value of the key (None where the base has no such key or file)."""
    return _value(parsed(ctx.base.text(at.path)), at.key)


def head_value(ctx: ChartContext, at: ValuesLine) -> Any:
    return _value(parsed(ctx.head.text(at.path)), at.key)


def parsed(text: str | None) -> Any:
    """A values file's data, parsed once per text (a review asks again for each finding on it)."""
    if not text:
        return None
    digest = hashlib.sha256(text.encode()).hexdigest()
    return _PARSED.get_or_make(digest, lambda: (_load(text),))[0]


def _load(text: str) -> Any:
    try:
        return bounded.load(text)
    except YAML_FAILURES:
        return None


def _value(node: Any, key: str) -> Any:
    for step in key.split("."):
        node = node.get(step) if isinstance(node, Mapping) else None
    return node


def propose_value(ctx: ChartContext, f: Finding, value: Any) -> Finding:
    """`f` proposing that the key at its values line take `value` (unchanged when the line is not
    a plain `key: ...` the edit can rewrite)."""
    at = values_line(f)
    source = ctx.head.text(at.path) if at is not None else None
    if at is None or source is None or f.path != at.path:
        return f
    lines = git_lines(source)
    if not 1 <= at.line <= len(lines):
        return f
    text = lines[at.line - 1]
    found = _KEY.match(text)
    if found is None:
        return f
    if not isinstance(value, Mapping):
        key = found["key"].strip("\"'")
        changed = with_value(text, key, _scalar(value)) if _inline_scalar(text) else None
        return f if changed is None else propose(f, ctx, at.line, at.line, [changed])
    end = block_end(lines, at.line)
    step = _step(lines, at.line, end)
    pad = " " * (len(found["lead"]) + step)
    body = yaml.safe_dump(dict(value), default_flow_style=False, sort_keys=False, indent=step)
    new = [f"{found['lead']}{found['key']}:", *(pad + row for row in git_lines(body))]
    return propose(f, ctx, at.line, end, new)


def _inline_scalar(text: str) -> bool:
    """The line holds its key's whole value (not a block that starts below it)."""
    rest = text.split(":", 1)[1].split("#", 1)[0].strip()
    return bool(rest) and rest[0] not in "|>{["


def _scalar(value: Any) -> str:
    dumped = yaml.safe_dump(value, default_flow_style=True).strip()
    return dumped.removesuffix("...").strip()


def _step(lines: list[str], start: int, end: int) -> int:
    """How much deeper than the key its block's first line sits (STEP for a one-line value)."""
    for number in range(start + 1, end + 1):
        deeper = indent(lines[number - 1]) - indent(lines[start - 1])
        if deeper > 0 and lines[number - 1].strip():
            return deeper
    return STEP
