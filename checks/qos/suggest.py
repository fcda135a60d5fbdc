"""The QoS check's one-click fix: the culprit container's `resources:` block as the downgrade's
`data["fix"]` states it (checks/qos/fix.py), written in the template's own indentation.

Only where the template writes the container's resources literally: a block that comes from values
(`toYaml .Values.resources`) is fixed in the values, which no suggestion on this template can do.
Resources other than cpu and memory in the block are kept as written, or, where the block says
something this cannot rewrite faithfully, no fix is proposed."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from bot.model.context import ChartContext
from bot.model.report import Finding
from bot.textlines import git_lines
from checks.kit.suggest import TEMPLATED, block_end, indent, propose
from checks.kit.template_lines import ListItem, container_item, container_items
from checks.kit.values_edit import base_value, head_value, propose_value, values_line
from checks.qos.findings import DOWNGRADE
from checks.qos.pod import ROLE_POD

SECTIONS = ("requests", "limits")
_DASH = re.compile(r"^(?P<indent> *)-(?P<gap> +)")
_OPENER = re.compile(r"^resources[ \t]*:[ \t]*(?P<inline>\{\})?[ \t]*(#.*)?$")


def suggest(ctx: ChartContext, f: Finding) -> Finding:
    """`f` with the culprit's block proposed, for a downgrade whose fix is one container's block."""
    fix = f.data.get("fix")
    blocks = fix.get("blocks") if isinstance(fix, Mapping) else None
    if f.rule != DOWNGRADE or not f.path or not blocks or len(blocks) != 1:
        return f  # several containers' blocks are several edits: one suggestion cannot hold them
    block = blocks[0]
    source = ctx.head.text(f.path)
    if block["role"] == ROLE_POD or source is None:
        return f
    item = container_item(container_items(source), block["container"], block["role"])
    if item is None:
        return f
    found = _edit(git_lines(source), item, block["resources"])
    return f if found is None else propose(f, ctx, *found)


def _edit(
    lines: list[str], item: ListItem, fix: Mapping[str, Mapping[str, str]]
) -> tuple[int, int, list[str]] | None:
    """(first line, last line, new lines) of the item's resources block, or of where it goes."""
    dash = _DASH.match(lines[item.start - 1])
    if dash is None:
        return None
    column = len(dash["indent"]) + 1 + len(dash["gap"])
    opener = _opener(lines, item, column)
    if opener is None:
        if any("resources" in lines[n - 1] for n in range(item.start, item.end + 1)):
            return None  # written some other way (an include, a flow mapping): not ours to add
        step = _step(lines, item, column)
        return item.start + 1, item.start, _block(" " * column, step, {}, fix)
    inline = _OPENER.match(lines[opener - 1][column:])
    end = opener if inline is not None and inline["inline"] else block_end(lines, opener)
    written = lines[opener - 1 : end]
    if any(TEMPLATED in line for line in written):
        return None  # from values or conditional: the literal edit would not be what renders
    old = _parsed(written, column)
    if old is None:
        return None
    step = (indent(written[1]) - column) if len(written) > 1 else _step(lines, item, column)
    new = _block(" " * column, step, old, fix)
    new[0] = written[0][:column] + new[0][column:]  # `- resources:` keeps its dash
    return opener, end, new


def _opener(lines: list[str], item: ListItem, column: int) -> int | None:
    for number in range(item.start, item.end + 1):
        text = lines[number - 1]
        if number > item.start and indent(text) != column:
            continue
        if _OPENER.match(text[column:]):
            return number
    return None


def _step(lines: Sequence[str], item: ListItem, column: int) -> int:
    """The template's indentation step: how much deeper than a key its first nested line sits."""
    for number in range(item.start + 1, item.end + 1):
        deeper = indent(lines[number - 1]) - column
        if deeper > 0 and lines[number - 1].strip():
            return deeper
    return 2


def _parsed(written: list[str], column: int) -> dict[str, dict[str, Any]] | None:
    """The block as YAML: requests and limits of scalars, else None (nothing to rewrite safely)."""
    try:
        data = yaml.safe_load("\n".join(line[column:] for line in written))
    except yaml.YAMLError:
        return None
    body = data.get("resources") if isinstance(data, dict) else None
    if body is None:
        return {}
    if not isinstance(body, dict) or not set(body) <= set(SECTIONS):
        return None
    if not all(isinstance(v, dict) or v is None for v in body.values()):
        return None
    return {k: dict(v or {}) for k, v in body.items()}


def _block(
    pad: str,
    step: int,
    old: Mapping[str, Mapping[str, Any]],
    fix: Mapping[str, Mapping[str, str]],
) -> list[str]:
    inner = " " * step
    out = [f"{pad}resources:"]
    order = [s for s in old if s in fix or old[s]]
    order += [s for s in SECTIONS if s in fix and s not in old]
    for section in order:
        values = {**old.get(section, {}), **fix.get(section, {})}
        out.append(f"{pad}{inner}{section}:")
        out += [f"{pad}{inner}{inner}{name}: {value}" for name, value in values.items()]
    return out


def values_fix(ctx: ChartContext, f: Finding) -> Finding:
    """A downgrade the engine placed on the values key that writes the culprit's whole resources
    (`resources: {}`): the key given the base's values where the PR removed some, else the block
    the fix rule states (`data["fix"]`)."""
    at = values_line(f)
    fix = f.data.get("fix")
    blocks = fix.get("blocks") if isinstance(fix, Mapping) else None
    field = f.origin.field if f.origin is not None else ()
    if f.rule != DOWNGRADE or at is None or not field or field[-1] != "resources":
        return f
    head, base = head_value(ctx, at), base_value(ctx, at)
    if not isinstance(head, Mapping):
        return f
    if isinstance(base, Mapping) and base and (set(base) - set(head) or not head):
        return propose_value(ctx, f, base)
    if blocks and len(blocks) == 1 and blocks[0]["role"] != ROLE_POD:
        written = {k: v for k, v in head.items() if k not in SECTIONS}
        return propose_value(ctx, f, {**written, **blocks[0]["resources"]})
    return f
