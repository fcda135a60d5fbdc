"""The probes check's one-click fix: a probe naming a port no containerPort carries, pointed at the
name the container does declare (its only named port, or the one name close to the wrong one)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from bot.model.context import ChartContext
from bot.model.report import Finding
from bot.textlines import git_lines
from checks.kit.containers import pod_containers
from checks.kit.suggest import propose, scalar, with_value
from checks.kit.template_lines import block_line, key_pattern
from checks.kit.values_edit import head_value, propose_value, values_line
from checks.probes.model import facts

# How alike a declared name must be to the wrong one to be taken for it (`http-web` for `http`).
CLOSE = 0.6


def suggest(ctx: ChartContext, f: Finding) -> Finding:
    """`f` (a named probe port) proposing the declared name on the probe's literal `port:` line."""
    port = f.data.get("port")
    if f.preexisting or not isinstance(port, str) or not f.path:
        return f
    name = _declared_name(ctx, f, port)
    source = ctx.head.text(f.path)
    line = f.line  # the probe's `port:` line (checks/probes/check.py), else its own
    if source is not None and line is not None and not _is_port(source, line):
        line = block_line(source, line, key_pattern("port"))
    if name is None or source is None or line is None:
        return f
    text = git_lines(source)[line - 1]
    changed = with_value(text, "port", name) if scalar(text, "port") == port else None
    return f if changed is None else propose(f, ctx, line, line, [changed])


def _is_port(source: str, line: int) -> bool:
    lines = git_lines(source)
    return 1 <= line <= len(lines) and re.search(key_pattern("port"), lines[line - 1]) is not None


def _declared_name(ctx: ChartContext, f: Finding, port: str) -> str | None:
    profiles: Sequence[str] = f.data.get("profiles") or ()
    rendered = ctx.chart.head.get(profiles[0]) if profiles else None
    if rendered is None or rendered.error is not None:
        return None
    names = [
        name
        for doc, _, container in pod_containers(rendered.documents)
        if doc.key == f.subject and container.name == f.data.get("container")
        for name, number in facts(container.body).ports.names.items()
        if number is not None
    ]
    if len(names) == 1:
        return names[0]
    close = difflib.get_close_matches(port, names, n=2, cutoff=CLOSE)
    return close[0] if len(close) == 1 else None


def values_fix(ctx: ChartContext, f: Finding) -> Finding:
    """A named probe port the engine placed on the values key that sets it: that key given the
    name the container declares."""
    at = values_line(f)
    port = f.data.get("port")
    if at is None or f.preexisting or not isinstance(port, str):
        return f
    if head_value(ctx, at) != port:
        return f
    name = _declared_name(ctx, f, port)
    return f if name is None else propose_value(ctx, f, name)
