"""Proposing a one-click fix: a finding's template lines rewritten, as the smallest edit GitHub can
show as a suggested change. The engine proves it before anyone sees it (bot/engine/suggestions.py).

GitHub takes a suggestion only on lines of the PR's diff, so an edit is proposed only when every
line it replaces is one the PR added at head; an edit that only inserts lines takes the line above
along (a suggestion replaces at least one line)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.model.context import Context
from bot.model.report import Finding
from bot.model.suggestion import Suggestion, with_suggestion
from bot.textlines import git_lines

# `key: value  # comment`, the value plain or quoted: what a one-value edit keeps around the value.
_SCALAR = r"""^(?P<lead>\s*(?:-\s+)?["']?{key}["']?[ \t]*:[ \t]*)(?P<quote>["']?)(?P<value>[^"'#\s]*)(?P=quote)(?P<rest>[ \t]*(?:#.*)?)$"""
TEMPLATED = "{{"


def added_lines(ctx: Context, path: str) -> frozenset[int]:
    """The lines of `path` at head that the PR added (those a suggestion may replace)."""
    change = ctx.changed(path)
    return change.added_lines if change is not None else frozenset()


def edit(
    ctx: Context, path: str, start: int, end: int, new_lines: Sequence[str]
) -> Suggestion | None:
    """Lines `start`..`end` of `path` at head replaced by `new_lines` (without newlines), trimmed
    to the lines that differ; None when nothing differs or a replaced line is not the PR's."""
    source = ctx.head.text(path)
    if source is None:
        return None
    lines = git_lines(source)
    if not 1 <= start <= end + 1 <= len(lines) + 1:
        return None
    old, new = lines[start - 1 : end], list(new_lines)
    while old and new and old[0] == new[0]:
        old, new, start = old[1:], new[1:], start + 1
    while old and new and old[-1] == new[-1]:
        old, new = old[:-1], new[:-1]
    if not old and not new:
        return None
    if not old:  # a pure insertion: the line above is replaced by itself and the new lines
        if start == 1:
            return None
        start -= 1
        old, new = [lines[start - 1]], [lines[start - 1], *new]
    last = start + len(old) - 1
    if not set(range(start, last + 1)) <= added_lines(ctx, path):
        return None
    return Suggestion(path, start, last, "".join(f"{line}\n" for line in new))


def propose(f: Finding, ctx: Context, start: int, end: int, new_lines: Sequence[str]) -> Finding:
    """`f` proposing that edit of its own file (unchanged when it cannot be proposed)."""
    if not f.path:
        return f
    return with_suggestion(f, edit(ctx, f.path, start, end, new_lines))


def with_value(line: str, key: str, value: str) -> str | None:
    """`line` (`key: old  # why`) with `value` in place of the old one, its quotes and comment
    kept; None when the line is not one literal value of `key`."""
    found = re.match(_SCALAR.format(key=re.escape(key)), line)
    if found is None or TEMPLATED in line:
        return None
    return f"{found['lead']}{found['quote']}{value}{found['quote']}{found['rest']}"


def scalar(line: str, key: str) -> str | None:
    """The literal value `line` gives `key`, or None."""
    found = re.match(_SCALAR.format(key=re.escape(key)), line)
    return found["value"] if found is not None and TEMPLATED not in line else None


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def block_end(lines: Sequence[str], opener: int) -> int:
    """The last line (1-based) of the block opened at line `opener`: the lines after it indented
    deeper, blank lines inside included, trailing blank lines not."""
    floor = indent(lines[opener - 1])
    last = opener
    for number in range(opener + 1, len(lines) + 1):
        text = lines[number - 1]
        if not text.strip():
            continue
        if indent(text) <= floor:
            break
        last = number
    return last
