"""chart-testing's `ct.yaml`: the repository's own policy for which directories hold charts, which
charts are left out, which branch PRs are compared with and whether a PR must bump its chart.

Read from the tree of the branch the PR targets, as `.github/chart-review.yml` is, so a PR cannot
loosen its own review. Where it is: the repository path in the `CT_CONFIG` environment variable
(an error when that file is missing there), else the one file that the workflows give `ct lint` or
`ct list-changed` as `--config PATH`, else `ct.yaml` (or `ct.yml`) at the root, else in `.github/`.
Of ct's many keys only the four below are read; the others are ct's business and are ignored."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from bot.engine.config import ConfigError
from bot.engine.yaml.blocks import LOADER
from bot.engine.yaml.errors import YAML_FAILURES, problem_at
from bot.git.objects import Tree
from bot.lru import BoundedCache

CT_CONFIG_ENV = "CT_CONFIG"
DEFAULT_PATHS = ("ct.yaml", "ct.yml", ".github/ct.yaml", ".github/ct.yml")
WORKFLOWS = ".github/workflows/"
# ct's defaults (its `--chart-dirs`, `--remote`, `--check-version-increment`).
CT_CHART_DIRS = ("charts",)
CT_REMOTE = "origin"
# A workflow line that runs `ct lint` or `ct list-changed` (the commands that pick the changed charts
# and check the version), and its `--config PATH`. A path built from a variable
# (`"${CT_CONFIGFILE}"`) cannot be known without running the workflow, so it does not match.
CT_COMMAND_RE = re.compile(r"(?:^|[\s(;&|`])ct\s.*\b(?:lint|list-changed)\b")
CONFIG_ARG_RE = re.compile(r"""--config[= ]+["']?([^\s"'$`{}]+)""")
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
    """The one config file the workflows pass to `ct lint` / `ct list-changed`, when it exists in
    the tree; None when they name none, or several different ones."""
    found: set[str] = set()
    for path in tree.paths(WORKFLOWS):
        if path.endswith((".yml", ".yaml")):
            found |= _config_args(tree.text(path) or "")
    present = [p for p in found if tree.text(p) is not None]
    return present[0] if len(present) == 1 else None


def _config_args(workflow: str) -> frozenset[str]:
    """The config files a workflow's text passes to `ct`; remembered for a text of a workflow's
    size (a replay reads the same workflows at every commit), bounded for a PR's crafted one."""
    if len(workflow) > _REMEMBERED_WORKFLOW_CHARS:
        return _scanned(workflow)
    return _remembered(workflow)


_REMEMBERED_WORKFLOW_CHARS = 64 * 1024


@functools.lru_cache(maxsize=256)
def _remembered(workflow: str) -> frozenset[str]:
    return _scanned(workflow)


def _scanned(workflow: str) -> frozenset[str]:
    found = set()
    for line in workflow.splitlines():
        arg = CONFIG_ARG_RE.search(line) if CT_COMMAND_RE.search(line) else None
        if arg is not None:
            found.add(_directory(arg.group(1)))
    return frozenset(found)


def parse_ct_config(text: str, source: str) -> CtConfig:
    """The keys chart-review uses from ct config text; a wrong type is an error naming its line."""
    try:
        node = yaml.compose(text, Loader=LOADER)
        data = yaml.load(text, Loader=LOADER)  # noqa: S506 - a safe loader
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc)
        where = f" line {line}" if line is not None else ""
        raise CtConfigError(f"{source}{where}: not valid YAML: {problem}") from None
    if data is None:
        return CtConfig(source=source)
    if not isinstance(data, dict):
        raise CtConfigError(f"{source} line 1: expected a mapping of ct settings")

    def fail(key: str, expected: str) -> CtConfigError:
        line = _key_line(node, key)
        return CtConfigError(f"{source} line {line}: '{key}': expected {expected}")

    dirs = _strings(data, "chart-dirs", fail)
    return CtConfig(
        source=source,
        chart_dirs=tuple(_directory(d) for d in dirs) if dirs is not None else CT_CHART_DIRS,
        excluded_charts=tuple(d.strip("/") for d in _strings(data, "excluded-charts", fail) or ()),
        target_branch=_string(data, "target-branch", fail),
        remote=_string(data, "remote", fail) or CT_REMOTE,
        check_version_increment=_flag(data, "check-version-increment", fail),
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


def _key_line(node: yaml.Node | None, key: str) -> int:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if k.value == key:
                return int(k.start_mark.line) + 1
    return 1


def _directory(path: str) -> str:
    """`./charts/` and `charts` are one directory; `.` and `./` the repository's root."""
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.strip("/") or "."
