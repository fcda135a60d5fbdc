"""What malformed YAML can raise. PyYAML reports most bad input as YAMLError, but a crafted tag
surfaces from its constructors as a bare error (`!!bool maybe` → KeyError, `!!int x` → ValueError,
`!!timestamp 2020-99-99` → ValueError), and deep nesting as RecursionError. PR content is
untrusted: every parse of it catches all of these and reports the file, never crashes."""

from __future__ import annotations

import yaml

from bot.textlines import git_line

YAML_FAILURES: tuple[type[BaseException], ...] = (
    yaml.YAMLError,
    KeyError,
    ValueError,
    TypeError,
    OverflowError,
    RecursionError,
)


def problem_at(exc: BaseException, text: str | None = None) -> tuple[int | None, object]:
    """The 1-based line a YAML failure names (None when it names none) and what it says: with the
    `text` parsed, the line as git numbers it (YAML also breaks lines at `\\r`, NEL, U+2028 and
    U+2029, bot/textlines.py)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or exc
    if mark is None:
        return None, problem
    return (git_line(text, mark.line) if text is not None else mark.line + 1), problem
