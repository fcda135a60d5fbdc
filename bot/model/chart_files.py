"""A chart's files as a release sees them: its `Chart.yaml` metadata, which files are its packaged
content, and where the charts of a repository are. Pure functions over a `Tree`."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import yaml

from bot.git.objects import Tree
from bot.lru import BoundedCache
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from bot.textlines import git_lines

CHART_FILE = "Chart.yaml"
# An apiVersion v1 chart's dependencies, which Helm 3 still reads: their `dependencies:` replace
# Chart.yaml's (Helm's loader reads this file into the chart's metadata after Chart.yaml).
REQUIREMENTS_FILE = "requirements.yaml"
# chart-testing's profiles: each `ci/NAME-values.yaml`; without any, the chart's defaults alone.
CI_VALUES_SUFFIX = "-values.yaml"
DEFAULT_PROFILE = "default"
HELMIGNORE = ".helmignore"
# Files that never reach a chart's consumers, or that only describe it: changing them alone needs no
# new version. Globs are relative to the chart directory; one without a slash matches at any depth.
DEFAULT_IGNORE = ("ci/**", "tests/**", "*.md")
VERSION_LINE_RE = re.compile(r"""^["']?version["']?[ \t]*:""", re.MULTILINE)
# A Chart.yaml line that sets the version or the appVersion: what a bump alone changes.
BUMP_LINE_RE = re.compile(r"^\s*(version|appVersion)\s*:")

_Loader = getattr(yaml, "CBaseLoader", yaml.BaseLoader)  # every scalar a string: `1.10` stays 1.10


@dataclass(frozen=True)
class Dependency:
    """One entry of `Chart.yaml`'s `dependencies:`, as written."""

    name: str
    repository: str = ""  # `file://../common`, a chart repository URL, `oci://…`, `@alias`, or none
    version: str | None = None


@dataclass(frozen=True)
class ChartMeta:
    """`Chart.yaml` at one commit. `error` says why a field could not be read."""

    path: str  # the chart directory
    name: str | None = None
    version: str | None = None
    app_version: str | None = None
    version_line: int | None = None
    error: str | None = None
    chart_type: str | None = None  # `library` charts render nothing themselves
    dependencies: tuple[str, ...] = ()  # the names of the charts it depends on
    requirements: tuple[Dependency, ...] = ()  # those entries in full, in their file's order
    requirements_file: str | None = None  # requirements.yaml where that declares them

    @property
    def file(self) -> str:
        return chart_file(self.path)


def chart_file(chart_path: str) -> str:
    return f"{chart_path.rstrip('/')}/{CHART_FILE}" if chart_path not in ("", ".") else CHART_FILE


def in_chart(path: str, chart_path: str) -> bool:
    return chart_path in ("", ".") or path.startswith(chart_path.rstrip("/") + "/")


def read_chart_meta(tree: Tree, chart_path: str) -> ChartMeta | None:
    """The chart's metadata at `tree`, or None when the chart has no `Chart.yaml` there; with the
    dependencies of its `requirements.yaml` where it has one, as Helm reads them."""
    text = tree.text(chart_file(chart_path))
    if text is None:
        return None
    extra = tree.text(f"{dir_prefix(chart_path)}{REQUIREMENTS_FILE}")
    return _METAS.get_or_make(
        (chart_path, text, extra), lambda: parse_chart_meta(chart_path, text, extra)
    )


# Parsed by text: every open PR's and every replayed change's claim reads a Chart.yaml that most
# of the others share; one is ~1 ms to parse and a few KB to keep.
_METAS: BoundedCache[tuple[str, str, str | None], ChartMeta] = BoundedCache(4096)


def parse_chart_meta(chart_path: str, text: str, requirements_text: str | None = None) -> ChartMeta:
    path = chart_file(chart_path)
    match = VERSION_LINE_RE.search(text)
    line = text.count("\n", 0, match.start()) + 1 if match else None
    try:
        data = bounded.load(text, _Loader)  # a base loader builds only strings
    except YAML_FAILURES as exc:
        return ChartMeta(chart_path, version_line=line, error=f"{path} is not valid YAML: {exc}")
    if not isinstance(data, dict):
        return ChartMeta(chart_path, version_line=line, error=f"{path}: expected a mapping")
    requirements = _requirements(data.get("dependencies"))
    declared = _declared(requirements_text)
    if declared is not None:
        requirements = declared
    return ChartMeta(
        chart_path,
        name=_scalar(data.get("name")),
        version=_scalar(data.get("version")),
        app_version=_scalar(data.get("appVersion")),
        version_line=line,
        chart_type=_scalar(data.get("type")),
        dependencies=tuple(d.name for d in requirements),
        requirements=requirements,
        requirements_file=(
            f"{dir_prefix(chart_path)}{REQUIREMENTS_FILE}" if declared is not None else None
        ),
    )


def _declared(requirements_text: str | None) -> tuple[Dependency, ...] | None:
    """The `dependencies:` of a requirements.yaml, or None where it sets none (then Chart.yaml's
    stand, as in Helm). A file Helm cannot read fails the render in Helm's words; here it is
    passed over."""
    if requirements_text is None:
        return None
    try:
        data = bounded.load(requirements_text, _Loader)
    except YAML_FAILURES:
        return None
    if not isinstance(data, dict) or "dependencies" not in data:
        return None
    return _requirements(data["dependencies"])


def _requirements(value: object) -> tuple[Dependency, ...]:
    entries = value if isinstance(value, list) else []
    return tuple(
        Dependency(name, _scalar(e.get("repository")) or "", _scalar(e.get("version")))
        for e in entries
        if isinstance(e, dict) and (name := _scalar(e.get("name")))
    )


def _scalar(value: object) -> str | None:
    return value if isinstance(value, str) else None


def charts_among(dirs: Iterable[str]) -> list[str]:
    """Of directories holding a Chart.yaml ("." for the root), the charts: not the subcharts
    vendored under another chart's `charts/`."""
    known = set(dirs)
    return [d for d in sorted(known) if not _vendored(d, known)]


def _vendored(chart_dir: str, dirs: set[str]) -> bool:
    """Under another chart's `charts/`: some `…/charts/` in the path follows a chart directory."""
    if chart_dir.startswith("charts/") and "." in dirs:
        return True
    at = chart_dir.find("/charts/")
    while at >= 0:
        if chart_dir[:at] in dirs:
            return True
        at = chart_dir.find("/charts/", at + 1)
    return False


def find_charts(tree: Tree) -> tuple[str, ...]:
    """Every chart directory in `tree`, without the subcharts vendored inside another chart."""
    return tuple(charts_among(tree.dirs_with(CHART_FILE)))


# -- which changed files are the chart's content --------------------------------------------------


@dataclass(frozen=True)
class PathRule:
    """One gitignore-style pattern, as `.helmignore` and `version.ignore` write them."""

    regex: re.Pattern[str]
    anchored: bool  # has a slash: matched from the chart directory, else against each name
    dir_only: bool  # ends in a slash: matches directories only
    negate: bool


def parse_rules(patterns: Iterable[str]) -> tuple[PathRule, ...]:
    return _rules(tuple(patterns))


@functools.lru_cache(maxsize=1024)  # a repository has a few .helmignore texts; 400 PRs read them
def _rules(patterns: tuple[str, ...]) -> tuple[PathRule, ...]:
    rules = []
    for raw in patterns:
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.removeprefix("!")
        dir_only = pattern.endswith("/")
        pattern = pattern.strip("/") if pattern != "/" else ""
        if pattern:
            anchored = "/" in pattern or raw.strip().lstrip("!").startswith("/")
            rules.append(PathRule(_glob_regex(pattern), anchored, dir_only, negate))
    return tuple(rules)


@functools.lru_cache(maxsize=4096)  # the same few patterns in every .helmignore of every PR
def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def ignored(relative: str, rules: Sequence[PathRule]) -> bool:
    """Whether `relative` (a path inside the chart) is excluded. As Helm walks the chart, an
    excluded directory is skipped whole: nothing under it comes back, not even by a `!` rule."""
    parts = relative.split("/")
    for depth in range(1, len(parts) + 1):
        is_dir = depth < len(parts)
        if _excluded("/".join(parts[:depth]), parts[depth - 1], is_dir, rules):
            return True
    return False


def _excluded(path: str, name: str, is_dir: bool, rules: Sequence[PathRule]) -> bool:
    result = False
    for rule in rules:
        if rule.dir_only and not is_dir:
            continue
        if rule.regex.match(path if rule.anchored else name):
            result = not rule.negate  # the last matching rule decides
    return result


def content_paths(
    paths: Iterable[str], chart_path: str, ignore: Sequence[str] = (), helmignore: str | None = None
) -> tuple[str, ...]:
    """Those of `paths` (repository paths) that are the chart's released content: inside the
    chart, not `Chart.yaml` itself, not matched by the default or configured ignore globs, not
    excluded by the chart's `.helmignore`."""
    prefix = chart_path.rstrip("/") + "/" if chart_path not in ("", ".") else ""
    globs = parse_rules([*DEFAULT_IGNORE, *ignore])
    helm = parse_rules(git_lines(helmignore or ""))
    found = []
    for path in paths:
        if not path.startswith(prefix):
            continue
        relative = path[len(prefix) :]
        if relative == CHART_FILE or ignored(relative, globs) or ignored(relative, helm):
            continue
        found.append(path)
    return tuple(dict.fromkeys(found))


def changed_paths(base: Tree, head: Tree, chart_path: str) -> tuple[str, ...]:
    """Files under the chart that differ between two trees (added, removed or modified)."""
    prefix = chart_path if chart_path not in ("", ".") else ""
    before, after = set(base.paths(prefix)), set(head.paths(prefix))
    changed = before ^ after
    changed.update(p for p in before & after if base.read(p) != head.read(p))
    return tuple(sorted(changed))


def is_vendored_archive(path: str, chart_dir: str) -> bool:
    """A packaged dependency: `charts/NAME.tgz` of this chart or of one of its subcharts."""
    relative = path[len(chart_dir) :].lstrip("/") if chart_dir not in ("", ".") else path
    return relative.endswith(".tgz") and (relative.startswith("charts/") or "/charts/" in relative)


def dir_prefix(directory: str) -> str:
    return directory.rstrip("/") + "/" if directory not in ("", ".") else ""
