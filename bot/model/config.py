"""`.github/chart-review.yml`: parsed into its models (bot/model/config_models.py), with errors
that name the key and line.

Read at the PR's base commit, so a PR cannot switch its own checks off."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from bot.errors import ChartReviewError
from bot.model.config_models import (
    CONFIG_PATH,
    LINK_PATTERN_RE,
    MAX_LINKED_REPOSITORIES,
    ONE_RUN,
    PER_CHECK,
    CheckConfig,
    CheckOptions,
    CheckRunLayout,
    Config,
    DependenciesConfig,
    DependencyRepository,
    DiffConfig,
    LinksConfig,
    ProfileSpec,
    SeverityName,
)
from bot.model.yaml.blocks import LOADER
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.textlines import git_line

__all__ = [
    "ConfigError",
    "layout_of_text",
    "parse_config",
    "CONFIG_PATH",
    "LINK_PATTERN_RE",
    "MAX_LINKED_REPOSITORIES",
    "ONE_RUN",
    "PER_CHECK",
    "CheckConfig",
    "CheckOptions",
    "CheckRunLayout",
    "Config",
    "DependenciesConfig",
    "DependencyRepository",
    "DiffConfig",
    "LinksConfig",
    "ProfileSpec",
    "SeverityName",
]


class ConfigError(ChartReviewError):
    """The config cannot be used. The message names the file, key and line."""


def parse_config(
    text: str | None,
    source: str = CONFIG_PATH,
    known_checks: Collection[CheckOptions] | None = None,
) -> Config:
    """Parse config text; None (no file) gives the defaults. `known_checks` (the registry's
    `options`) says which model reads each check's options and where; with it, a `checks:` entry
    naming no check is an error too (a typo would otherwise switch nothing off). Without it, every
    entry under `checks:` is read as enabled and severity alone."""
    if text is None or not text.strip():
        return Config()
    try:
        # libyaml's parser refuses nesting past 1000 levels with a clean error; the pure-Python
        # composer would recurse into RecursionError, near whose depth even a garbage
        # collector's finalizer fails.
        node = yaml.compose(text, Loader=LOADER)
        data = yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc, text)
        where = f" line {line}" if line is not None else ""
        raise ConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if data is None:
        return Config()
    if not isinstance(data, dict):
        raise ConfigError(f"{source} line 1: expected a mapping of settings, found {_kind(data)}")
    known = {o.name: o for o in known_checks} if known_checks is not None else None
    tops = {n: data[n] for n, o in (known or {}).items() if o.top_level and n in data}
    settings = {k: v for k, v in data.items() if k not in tops and k != "checks"}
    try:
        config = Config.model_validate({**settings, "checks": {}})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, node, source, text)) from None
    entries = data.get("checks")
    if entries is not None and not isinstance(entries, dict):
        line = _line_of(node, ["checks"], text)
        where = f" line {line}" if line else ""
        raise ConfigError(f"{source}{where}: 'checks': expected a mapping of checks by name")
    _check_names(entries or {}, node, source, known, text)
    read = {
        name: _read_options(known, name, raw, [name] if name in tops else ["checks", name], where)
        for name, raw in [*(entries or {}).items(), *tops.items()]
        for where in [(node, source, text)]
    }
    return config.model_copy(update={"checks": read})


def _read_options(
    known: Mapping[str, CheckOptions] | None,
    name: str,
    raw: Any,
    at: list[str],
    where: tuple[yaml.Node | None, str, str],
) -> CheckConfig:
    """One check's options, read by the model it declares; errors name the key and line."""
    node, source, text = where
    model = known[name].model if known is not None else CheckConfig
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, node, source, text, at)) from None


def layout_of_text(text: str | None) -> CheckRunLayout:
    """The `check_runs:` a config asks for even when the rest of it cannot be used: its runs are
    begun before a review reports the config's error, and branch protection may require each
    per-check run by name. Anything unreadable is the default."""
    try:
        data = yaml.load(text or "", Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES:
        return ONE_RUN
    wanted = data.get("check_runs") if isinstance(data, dict) else None
    return PER_CHECK if wanted == PER_CHECK else ONE_RUN


def _check_names(
    entries: Mapping[str, Any],
    node: yaml.Node | None,
    source: str,
    known: Mapping[str, CheckOptions] | None,
    text: str = "",
) -> None:
    for name in entries:
        line = _line_of(node, ["checks", name], text)
        where = f"{source} line {line}" if line else source
        if known is not None and name in known and known[name].top_level:
            raise ConfigError(
                f"{where}: 'checks.{name}': the {name} check is configured under the top-level "
                f"'{name}:' key"
            )
        if known is not None and name not in known:
            raise ConfigError(
                f"{where}: 'checks.{name}': unknown check (one of {', '.join(sorted(known))})"
            )


def _describe(
    exc: ValidationError,
    node: yaml.Node | None,
    source: str,
    text: str = "",
    at: Sequence[str] = (),
) -> str:
    """The first error, naming its key (under `at`, where the model read was) and its line."""
    err = exc.errors()[0]
    loc = [*at, *(str(p) for p in err["loc"] if not str(p).startswith(("function-", "literal[")))]
    # pydantic appends union-member names to the location; keep only keys that exist in the file.
    key = ".".join(loc)
    line = _line_of(node, [*at, *err["loc"]], text)
    where = f" line {line}" if line else ""
    if err["type"] == "extra_forbidden":
        return f"{source}{where}: unknown key '{key}'"
    return f"{source}{where}: '{key}': {err['msg']}"


def _line_of(node: yaml.Node | None, path: list[Any], text: str = "") -> int | None:
    """The line, as git numbers `text`'s lines, of the deepest key of `path` the file holds."""
    line = _yaml_line(text, node.start_mark.line) if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(part)), None)
            key_node = next((k for k, _ in node.value if k.value == str(part)), None)
            if match is None:
                return line
            line = _yaml_line(text, (key_node or match).start_mark.line)
            node = match
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            node = node.value[part]
            line = _yaml_line(text, node.start_mark.line)
        else:
            return line
    return line


def _yaml_line(text: str, mark_line: int) -> int:
    """A YAML mark's 0-based line as git's 1-based one (YAML breaks lines at U+2028 and NEL too)."""
    return git_line(text, mark_line)


def _kind(value: Any) -> str:
    return {
        list: "a list",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
    }.get(type(value), type(value).__name__)
