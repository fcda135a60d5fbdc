"""chart-testing's `ct.yaml`: the repository's own policy for which directories hold charts, which
charts are left out, which branch PRs are compared with, whether a PR must bump its chart, and how
ct lints its YAML.

Read from the tree of the branch the PR targets, as `.github/chart-review.yml` is, so a PR cannot
loosen its own review. Where it is: the repository path in the `CT_CONFIG` environment variable
(an error when that file is missing there), else the one file that CI gives `ct lint` or
`ct list-changed` as `--config PATH` (in a workflow, or a Makefile target or script one calls:
bot/model/ci/), else `ct.yaml` (or `ct.yml`) at the root, else in `.github/`. Only the keys of
`CtConfig` are read; the others are ct's business and are ignored. `version_gates` says which of
CI's ct runs lint a chart and whether each checks its version."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.ci.ct_runs import CtRun, ct_runs, flag_true
from bot.model.ci.shell import UNKNOWN
from bot.model.config import ConfigError
from bot.model.yaml.blocks import LOADER
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.textlines import git_line

CT_CONFIG_ENV = "CT_CONFIG"
# The ct commands whose config picks the charts and checks versions (`ct install`'s may differ).
CHOOSING = frozenset({"lint", "lint-and-install", "list-changed"})
DEFAULT_PATHS = ("ct.yaml", "ct.yml", ".github/ct.yaml", ".github/ct.yml")
# ct's defaults (its `--chart-dirs`, `--remote`, `--check-version-increment`).
CT_CHART_DIRS = ("charts",)
CT_REMOTE = "origin"
_Fail = Callable[[str, str], "CtConfigError"]
_CACHE: BoundedCache[tuple[str, str | None], CtConfig] = BoundedCache(64)


class CtConfigError(ConfigError):
    """`ct.yaml` cannot be used; the message names the file, key and line."""


@dataclass(frozen=True)
class CtConfig:
    """What chart-review takes from `ct.yaml`. `source` None: the repository has none, and chart
    discovery stays chart-review's own (every directory with a `Chart.yaml`)."""

    source: str | None = None
    chart_dirs: tuple[str, ...] = CT_CHART_DIRS
    excluded_charts: tuple[str, ...] = ()
    target_branch: str | None = None
    remote: str = CT_REMOTE
    check_version_increment: bool = True
    # What `ct lint` validates besides `helm lint` (checks/yaml/): yamllint's config and the
    # Chart.yaml schema (None: ct's own defaults), and whether each runs.
    lint_conf: str | None = None
    chart_yaml_schema: str | None = None
    validate_yaml: bool = True
    validate_chart_schema: bool = True

    @property
    def target_refs(self) -> tuple[str, ...]:
        """The refs that name ct's target branch here: a bare mirror has `main`, a clone
        `origin/main` (ct itself compares with `<remote>/<target-branch>`)."""
        if not self.target_branch:
            return ()
        return (self.target_branch, f"{self.remote}/{self.target_branch}")

    def excludes(self, chart_dir: str) -> bool:
        """ct names excluded charts by directory name; a full path is taken too."""
        name = chart_dir.rsplit("/", 1)[-1]
        return name in self.excluded_charts or chart_dir in self.excluded_charts


NO_CT = CtConfig()


def load_ct_config(tree: Tree, environ: Mapping[str, str] | None = None) -> CtConfig:
    """The `ct.yaml` policy at `tree` (see the module's docstring for where it is looked for)."""
    env = os.environ if environ is None else environ
    named = (env.get(CT_CONFIG_ENV) or "").strip().removeprefix("./") or None
    return _CACHE.get_or_make((tree.commit, named), lambda: _load(tree, named))


def _load(tree: Tree, named: str | None) -> CtConfig:
    if named is not None:
        text = tree.text(named)
        if text is None:
            raise CtConfigError(f"{CT_CONFIG_ENV}={named}: no such file at {tree.commit[:12]}")
        return parse_ct_config(text, named)
    for path in (workflow_config(tree), *DEFAULT_PATHS):
        text = tree.text(path) if path else None
        if text is not None:
            return parse_ct_config(text, path or "")
    return NO_CT


def workflow_config(tree: Tree) -> str | None:
    """The one config file CI passes to `ct` as `--config` (in a workflow, or a Makefile target or
    script one calls), when it exists in the tree; None when it names none, or several."""
    given = {
        p
        for run in ct_runs(tree)
        if run.subcommand in CHOOSING and (p := run.flags.get("config")) is not None
    }
    present = {path for p in given if UNKNOWN not in p and tree.is_file(path := _directory(p))}
    return present.pop() if len(present) == 1 else None


def parse_ct_config(text: str, source: str) -> CtConfig:
    """The keys chart-review uses from ct config text; a wrong type is an error naming its line."""
    try:
        node = yaml.compose(text, Loader=LOADER)
        data = yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc, text)
        where = f" line {line}" if line is not None else ""
        raise CtConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if data is None:
        return CtConfig(source=source)
    if not isinstance(data, dict):
        raise CtConfigError(f"{source} line 1: expected a mapping of ct settings")

    def fail(key: str, expected: str) -> CtConfigError:
        line = _key_line(node, key, text)
        return CtConfigError(f"{source} line {line}: '{key}': expected {expected}")

    dirs = _strings(data, "chart-dirs", fail)
    return CtConfig(
        source=source,
        chart_dirs=tuple(_directory(d) for d in dirs) if dirs is not None else CT_CHART_DIRS,
        excluded_charts=tuple(d.strip("/") for d in _strings(data, "excluded-charts", fail) or ()),
        target_branch=_string(data, "target-branch", fail),
        remote=_string(data, "remote", fail) or CT_REMOTE,
        check_version_increment=_flag(data, "check-version-increment", fail),
        lint_conf=_string(data, "lint-conf", fail),
        chart_yaml_schema=_string(data, "chart-yaml-schema", fail),
        validate_yaml=_flag(data, "validate-yaml", fail),
        validate_chart_schema=_flag(data, "validate-chart-schema", fail),
    )


def _strings(data: dict[str, Any], key: str, fail: _Fail) -> tuple[str, ...] | None:
    """A list of strings; as on ct's command line, one string may hold several, comma-separated."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(v.strip() for v in value if v.strip())
    raise fail(key, "a list of strings")


def _string(data: dict[str, Any], key: str, fail: _Fail) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return (value or "").strip() or None
    raise fail(key, "a string")


def _flag(data: dict[str, Any], key: str, fail: _Fail) -> bool:
    value = data.get(key, True)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise fail(key, "true or false")


def _key_line(node: yaml.Node | None, key: str, text: str) -> int:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if k.value == key:
                return git_line(text, int(k.start_mark.line))
    return 1


def _directory(path: str) -> str:
    """`./charts/` and `charts` are one directory; `.` and `./` the repository's root."""
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.strip("/") or "."


# -- the runs of ct that check a chart's version ---------------------------------------------------


@dataclass(frozen=True)
class VersionGate:
    """A `ct lint` (or `lint-and-install`) that CI runs on a chart: whether it checks that the
    chart's version increased (None: set by something only the run knows), and what said so."""

    run: CtRun
    checks: bool | None
    said_by: str  # "--check-version-increment=false", "CT_CHECK_VERSION_INCREMENT", "ct.yaml", ...


def version_gates(tree: Tree, chart_path: str) -> tuple[VersionGate, ...]:
    """The ct runs of the CI at `tree` that lint the chart at `chart_path`."""
    gates = []
    for run in ct_runs(tree):
        if not run.checks_versions:
            continue
        config = _run_config(tree, run)
        if _covers(run, config, chart_path):
            gates.append(_gate(run, config))
    return tuple(gates)


def _run_config(tree: Tree, run: CtRun) -> CtConfig | None:
    """The config the run loads; None where it cannot be known or read."""
    path = run.config_path(tree)
    if path is None:
        return NO_CT
    if UNKNOWN in path:
        return None
    text = tree.text(_directory(path))
    if text is None:
        return None
    try:
        return parse_ct_config(text, _directory(path))
    except CtConfigError:
        return None


def _covers(run: CtRun, config: CtConfig | None, chart_path: str) -> bool:
    charts = run.setting("charts")
    if charts is not None:
        return UNKNOWN in charts or chart_path in _dirs(charts)
    excluded = run.setting("excluded-charts")
    if excluded is not None and UNKNOWN not in excluded:
        if chart_path in _dirs(excluded) or chart_path.rsplit("/", 1)[-1] in _dirs(excluded):
            return False
    elif config is not None and config.excludes(chart_path):
        return False
    given = run.setting("chart-dirs")
    if given is not None and UNKNOWN in given:
        return True
    dirs = _dirs(given) if given is not None else (config or NO_CT).chart_dirs
    parent = chart_path.rsplit("/", 1)[0] if "/" in chart_path else "."
    return parent in dirs


def _dirs(listed: str) -> tuple[str, ...]:
    return tuple(_directory(d) for d in listed.split(",") if d.strip())


def _gate(run: CtRun, config: CtConfig | None) -> VersionGate:
    if "check-version-increment" in run.flags:
        value = run.flags["check-version-increment"]
        return VersionGate(run, flag_true(value), f"--check-version-increment={value}")
    env = run.env.get("CT_CHECK_VERSION_INCREMENT")
    if env is not None:
        return VersionGate(run, flag_true(env), f"CT_CHECK_VERSION_INCREMENT={env}")
    if config is None:
        return VersionGate(run, None, "a config file only the run knows")
    if config.source and not config.check_version_increment:
        return VersionGate(run, False, f"`check-version-increment: false` in {config.source}")
    return VersionGate(run, True, config.source or "ct's default")
