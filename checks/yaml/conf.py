"""The yamllint config and the yamale schema a ct run uses, read from the repository (at the target
branch) or, where it names none, ct's own defaults, carried in `ct_defaults/` with their notice.

yamllint would read files of its own from a config: an `extends:` path and `ignore-from-file:`
lists. Here every such file is read from the same tree (a path leaving the repository is not read),
and the config handed to yamllint names none: it never opens a file of this machine but its own
bundled `default` and `relaxed` configs. yamllint and yamale are imported here, when a chart is
linted, never when the review's modules load."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.textlines import git_lines
from checks.yaml.settings import CHART_SCHEMA, LINT_CONF, FileRef

# A lint config or schema is a page of YAML (ct's are 1 KB): past this it is not read.
MAX_CONF_BYTES = 64 * 1024
# `extends:` chains of configs in the repository, followed this deep.
MAX_EXTENDS = 4
BUILTIN_CONFS = ("default", "relaxed")  # the configs yamllint ships and may extend by name
_LOADED: BoundedCache[tuple[str, str | None, str], Loaded] = BoundedCache(64)


class ConfError(Exception):
    """A config or schema that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Loaded:
    """A yamllint config or yamale schema ready to use, or `error` saying why there is none.
    `source` names it for messages: a repository path, or ct's default."""

    value: Any
    source: str
    error: str = ""
    key: str = ""  # what it was read from: its commit and path, or ct's default


def lint_config(tree: Tree, ref: FileRef) -> Loaded:
    return _load(tree, ref, LINT_CONF, _yamllint_config)


def chart_schema(tree: Tree, ref: FileRef) -> Loaded:
    return _load(tree, ref, CHART_SCHEMA, _yamale_schema)


def _load(tree: Tree, ref: FileRef, name: str, make: Callable[[Tree, str, str], Any]) -> Loaded:
    commit = tree.commit if ref.path is not None else ""
    return _LOADED.get_or_make((commit, ref.path, name), lambda: _make(tree, ref, name, make))


def _make(tree: Tree, ref: FileRef, name: str, make: Callable[[Tree, str, str], Any]) -> Loaded:
    source = ref.path or f"ct's default {name}"
    key = f"{tree.commit}:{ref.path}" if ref.path is not None else source
    try:
        text = _read(tree, ref.path) if ref.path is not None else _default_text(name)
        return Loaded(make(tree, text, source), source, key=key)
    except ConfError as exc:
        return Loaded(None, source, str(exc), key)


@cache
def _default_text(name: str) -> str:
    return (resources.files("checks.yaml") / "ct_defaults" / name).read_text(encoding="utf-8")


def _read(tree: Tree, path: str) -> str:
    data = tree.read(path)
    if data is None:
        raise ConfError(f"{path}: no such file")
    if len(data) > MAX_CONF_BYTES:
        raise ConfError(f"{path}: {len(data):,} bytes, more than the {MAX_CONF_BYTES:,} read")
    return data.decode("utf-8", errors="replace")


# -- yamllint --------------------------------------------------------------------------------------


def _yamllint_config(tree: Tree, text: str, source: str) -> Any:
    from yamllint.config import YamlLintConfig, YamlLintConfigError

    raw = _resolved(tree, text, source, 0)
    try:
        return YamlLintConfig(content=yaml.safe_dump(raw))
    except YamlLintConfigError as exc:
        raise ConfError(f"{source}: {exc}") from None


def _resolved(tree: Tree, text: str, source: str, depth: int) -> dict[str, Any]:
    """The config with every file it names read from `tree`: `extends:` of a repository file
    merged in (as yamllint merges it: a rule's options over the base's), `ignore-from-file:` made
    the `ignore:` patterns those files hold. Only yamllint's own configs stay named."""
    conf = _mapping(text, source)
    rules = conf.get("rules")
    if isinstance(rules, dict):
        conf["rules"] = {k: _rule(tree, v, f"{source} rules.{k}") for k, v in rules.items()}
    _inline_ignores(tree, conf, source)
    extends = conf.pop("extends", None)
    if extends is None:
        return conf
    if not isinstance(extends, str):
        raise ConfError(f"{source}: extends: expected the name or path of a config")
    if "/" not in extends and extends in BUILTIN_CONFS:
        return {**conf, "extends": extends}
    if depth >= MAX_EXTENDS:
        raise ConfError(f"{source}: extends {extends}: more than {MAX_EXTENDS} configs deep")
    path = _repository_path(extends, source)
    base = _resolved(tree, _read(tree, path), path, depth + 1)
    return _merged(base, conf)


def _mapping(text: str, source: str) -> dict[str, Any]:
    try:
        conf = bounded.load(text)
    except YAML_FAILURES as exc:
        raise ConfError(_not_yaml(source, exc)) from None
    if not isinstance(conf, dict):
        raise ConfError(f"{source}: not a mapping of yamllint settings")
    return dict(conf)


def _rule(tree: Tree, value: Any, where: str) -> Any:
    if value == "enable":
        return {}
    if value == "disable":
        return False
    if isinstance(value, dict):
        value = dict(value)
        _inline_ignores(tree, value, where)
    return value


def _inline_ignores(tree: Tree, conf: dict[str, Any], where: str) -> None:
    named = conf.pop("ignore-from-file", None)
    if named is None:
        return
    if "ignore" in conf:
        raise ConfError(f"{where}: ignore and ignore-from-file cannot be used together")
    files = [named] if isinstance(named, str) else named
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfError(f"{where}: ignore-from-file: expected file names")
    lines = [line for f in files for line in git_lines(_read(tree, _repository_path(f, where)))]
    conf["ignore"] = lines


def _repository_path(path: str, where: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    if path.startswith(("/", "~", "$")) or ".." in path.split("/"):
        raise ConfError(f"{where}: {path} is outside the repository, and is not read")
    return path


def _merged(base: dict[str, Any], conf: dict[str, Any]) -> dict[str, Any]:
    """yamllint's `extend`: each rule's options over the base's (a rule the base disables, or a
    rule that is not options, replaced whole); the base's ignore unless the config has its own."""
    rules = dict(base.get("rules") or {})
    for name, value in (conf.get("rules") or {}).items():
        kept = rules.get(name)
        rules[name] = (
            {**kept, **value} if isinstance(value, dict) and isinstance(kept, dict) else value
        )
    merged = {k: v for k, v in conf.items() if k != "rules"}
    merged["rules"] = rules
    if "extends" in base:
        merged["extends"] = base["extends"]
    if "ignore" not in conf and "ignore" in base:
        merged["ignore"] = base["ignore"]
    return merged


# -- yamale ----------------------------------------------------------------------------------------


def _yamale_schema(tree: Tree, text: str, source: str) -> Any:
    import yamale

    _refuse_alias_bombs(text, source)  # before yamale's own loader sees the text
    try:
        # The schema is the target branch's, and yamale reads its expressions through a parse
        # that admits only its validators with literal arguments, never other code.
        return yamale.make_schema(content=text)
    except (SyntaxError, ValueError, TypeError, yaml.YAMLError) as exc:
        raise ConfError(f"{source}: not a yamale schema: {exc}") from None


def _refuse_alias_bombs(text: str, source: str) -> None:
    try:
        bounded.load_all(text)
    except YAML_FAILURES as exc:
        raise ConfError(_not_yaml(source, exc)) from None


def _not_yaml(source: str, exc: BaseException) -> str:
    line, problem = problem_at(exc)
    where = f" line {line}" if line is not None else ""
    return f"{source}{where}: not valid YAML: {problem}"
