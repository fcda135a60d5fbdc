"""What yamllint and yamale say of one file's text, as `ct lint` runs them (`yamllint --config-file
CONF FILE`, `yamale --schema SCHEMA Chart.yaml`, strict as yamale's command line is): remembered
by config and text, so that a file the same at base and head, or in another review, is read once.

yamllint reads about 170 KB a second, so a file is linted only up to MAX_LINT_BYTES (a values file
of 1 MiB costs some 6 s); past it the check says it was not read, naming the cap."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import yaml

from bot.lru import BoundedCache
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from bot.model.yaml.loader import LOADER
from checks.yaml.conf import Loaded

MAX_LINT_BYTES = 1024 * 1024
_YAMLLINT: BoundedCache[tuple[str, str, str], tuple[Problem, ...]] = BoundedCache(1024)
_YAMALE: BoundedCache[tuple[str, str, str], tuple[SchemaError, ...]] = BoundedCache(1024)


@dataclass(frozen=True)
class Problem:
    """One yamllint problem: `rule` None for a syntax error, which yamllint reports as an error."""

    line: int
    column: int
    level: str  # "error" | "warning"
    rule: str | None
    description: str


@dataclass(frozen=True)
class SchemaError:
    """One yamale error: the key path it names (`maintainers.0.email`) and what is wrong there."""

    key: str
    problem: str
    line: int | None


def yamllint_problems(conf: Loaded, path: str, text: str) -> tuple[Problem, ...]:
    """What yamllint says of `text`, read as the repository file `path` (which the config's
    `ignore` patterns match, as ct passes yamllint the chart's paths from the repository root)."""
    key = (conf.key, path, _digest(text))
    return _YAMLLINT.get_or_make(key, lambda: _lint(conf.value, path, text))


def _lint(conf: Any, path: str, text: str) -> tuple[Problem, ...]:
    from yamllint import linter

    return tuple(
        Problem(p.line, p.column, p.level, p.rule, p.desc) for p in linter.run(text, conf, path)
    )


def schema_errors(schema: Loaded, path: str, text: str) -> tuple[SchemaError, ...]:
    """What yamale says of a Chart.yaml; nothing when it is not YAML (yamllint says so, and Helm)."""
    key = (schema.key, path, _digest(text))
    return _YAMALE.get_or_make(key, lambda: _validate(schema.value, path, text))


def _validate(schema: Any, path: str, text: str) -> tuple[SchemaError, ...]:
    import yamale

    try:
        data = bounded.load(text)
        node = yaml.compose(text, Loader=LOADER)
    except YAML_FAILURES:
        return ()
    try:
        [result] = yamale.validate(schema, [(data or {}, path)], strict=True, _raise_error=False)
    except RecursionError:
        return ()  # nested past what yamale walks; Helm refuses such a Chart.yaml itself
    out: dict[str, SchemaError] = {}
    for text_error in result.errors:  # yamale repeats some (a map's value errors)
        key, _, problem = str(text_error).partition(": ")
        out.setdefault(str(text_error), SchemaError(key, problem, key_line(node, key)))
    return tuple(out.values())


def key_line(node: yaml.Node | None, key: str) -> int | None:
    """The line of the value yamale's key path names (`annotations.artifacthub.io/links`: keys may
    hold dots, so each step takes the longest key that the rest of the path starts with); as far as
    the path is found, else None."""
    line = None
    rest = key
    while rest and node is not None:
        step = _step(node, rest)
        if step is None:
            break
        node, at, rest = step
        line = at
    return line


def _step(node: yaml.Node, rest: str) -> tuple[yaml.Node, int, str] | None:
    if isinstance(node, yaml.MappingNode):
        for k, value in sorted(node.value, key=lambda kv: -len(str(kv[0].value))):
            name = str(k.value)
            if rest == name or rest.startswith(name + "."):
                return value, k.start_mark.line + 1, rest[len(name) + 1 :]
    if isinstance(node, yaml.SequenceNode):
        index, _, after = rest.partition(".")
        if index.isdigit() and int(index) < len(node.value):
            item = node.value[int(index)]
            return item, item.start_mark.line + 1, after
    return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()
