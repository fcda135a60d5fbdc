"""The probes check's one-click fix: a probe naming a port no containerPort carries, pointed at the
name the container does declare (its only named port, or the one name close to the wrong one)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from bot.engine.context import ChartContext
from bot.engine.report import Finding
from bot.textlines import git_lines
from checks.kit.containers import pod_containers
from checks.kit.suggest import propose, scalar, with_value
from checks.kit.template_lines import block_line, key_pattern
from checks.probes.model import facts

# How alike a declared name must be to the wrong one to be taken for it (`http-web` for `http`).
CLOSE = 0.6


def suggest(ctx: ChartContext, f: Finding) -> Finding:
    """`f` (a named probe port) proposing the declared name on the probe's literal `port:` line."""
    port = f.data.get("port")
    if f.data.get("preexisting") or not isinstance(port, str) or not f.path:
        return f
    name = _declared_name(ctx, f, port)
    source = ctx.head.text(f.path)
    line = block_line(source, f.line, key_pattern("port"))
    if name is None or source is None or line is None:
        return f
    text = git_lines(source)[line - 1]
    changed = with_value(text, "port", name) if scalar(text, "port") == port else None
    return f if changed is None else propose(f, ctx, line, line, [changed])


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
