"""What malformed YAML can raise. PyYAML reports most bad input as YAMLError, but a crafted tag
surfaces from its constructors as a bare error (`!!bool maybe` → KeyError, `!!int x` → ValueError,
`!!timestamp 2020-99-99` → ValueError), and deep nesting as RecursionError. PR content is
untrusted: every parse of it catches all of these and reports the file, never crashes."""

from __future__ import annotations

import yaml

YAML_FAILURES: tuple[type[BaseException], ...] = (
    yaml.YAMLError,
    KeyError,
    ValueError,
    TypeError,
    OverflowError,
    RecursionError,
)


def problem_at(exc: BaseException) -> tuple[int | None, object]:
    """The 1-based line a YAML failure names (None when it names none) and what it says."""
    mark = getattr(exc, "problem_mark", None)
    return (mark.line + 1 if mark is not None else None), getattr(exc, "problem", None) or exc
