"""A chart's values profiles at one side (chart-testing's `ci/*.yaml` rule plus config entries), and
the values files they name, parsed with errors that name the file and line."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from bot.model.chart_files import CI_VALUES_SUFFIX, DEFAULT_PROFILE
from bot.model.config import ProfileSpec
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES, problem_at
from bot.render.base import RenderFailure

# Helm's loader refuses a chart file over 5 MiB (`MaxDecompressedFileSize`); a CI values file is held
# to the same bound before it is parsed, in the reviewing process.
MAX_VALUES_BYTES = 5 * 1024 * 1024


# Helm's own bound on a `--set` list index (strvals `MaxIndex`): `a[99999999]=x` would allocate.
MAX_SET_INDEX = 65536


@dataclass(frozen=True)
class Assignment:
    """One `KEY=VAL` of a `--set`, parsed: map keys (str) and list indices (int) down to the place
    its value goes. Applied to the values it lands in, as Helm's strvals does (bot/cli/values_args
    parses the text)."""

    path: tuple[str | int, ...]
    value: Any  # a scalar, or a list of scalars (`a={x,y}`)
    source: str  # the `--set` argument it came from, to name in an error


@dataclass(frozen=True)
class ValuesOverride:
    """What the user adds to every profile, as `helm template -f FILE --set KEY=VAL` would: the
    files merged after the profile's own values (a later `-f`), then the assignments into that."""

    files: tuple[Mapping[str, Any], ...] = ()
    sets: tuple[Assignment, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.files or self.sets)

    @cached_property
    def content_id(self) -> str:
        """Part of the render cache's values id: other overrides, another render."""
        sets = [[list(a.path), a.value] for a in self.sets]
        text = json.dumps([list(self.files), sets], sort_keys=True, default=repr)
        return "override:" + hashlib.sha256(text.encode()).hexdigest()

    def apply(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values` with the files merged in, then the assignments made; an assignment that needs a
        map or list where the values hold something else fails as Helm's does, naming it."""
        out = dict(values)
        for data in self.files:
            out = merge_values(out, data)
        out = copy.deepcopy(out)  # assigned into below; the inputs may be shared
        for assignment in self.sets:
            _assign(out, assignment)
        return out


NO_OVERRIDE = ValuesOverride()


@dataclass(frozen=True)
class Profile:
    """A values profile of a chart at one side: where its values come from, and its flags."""

    name: str
    values_path: str | None  # repository path of the values file; None for the chart's defaults
    inline: Mapping[str, Any] | None = None
    arbitrary_uid: bool = False
    override: ValuesOverride = NO_OVERRIDE  # the command line's, applied last


def profile_name(ci_file: str) -> str:
    """`ci/eks-values.yaml` is profile `eks`."""
    return ci_file.rsplit("/", 1)[-1][: -len(CI_VALUES_SUFFIX)]


def discover_profiles(
    chart_dir: str,
    paths: tuple[str, ...],
    extra: list[ProfileSpec],
    override: ValuesOverride = NO_OVERRIDE,
) -> dict[str, Profile]:
    """chart-testing's rule, exactly (`ct lint` globs `ci/*-values.yaml`): every such file is a
    profile and the defaults alone are not rendered; without any, one profile `default`. Other
    files under ci/ (`ci/kind-config.yaml`, `ci/test.sh`) are not values. Config entries add
    profiles or set flags on existing ones."""
    prefix = f"{chart_dir}/ci/" if chart_dir not in ("", ".") else "ci/"
    ci = [p for p in paths if p.startswith(prefix) and "/" not in p[len(prefix) :]]
    ci = [p for p in ci if p.endswith(CI_VALUES_SUFFIX) and len(p) > len(prefix + CI_VALUES_SUFFIX)]
    profiles = {profile_name(p): Profile(profile_name(p), p) for p in ci}
    if not profiles:
        profiles[DEFAULT_PROFILE] = Profile(DEFAULT_PROFILE, None)
    for spec in extra:
        existing = profiles.get(spec.name)
        if spec.defines_values:
            profiles[spec.name] = Profile(
                spec.name, spec.values_file, spec.values, spec.arbitrary_uid
            )
        elif existing is not None:
            profiles[spec.name] = Profile(
                existing.name, existing.values_path, existing.inline, spec.arbitrary_uid
            )
        elif spec.name == DEFAULT_PROFILE:
            profiles[DEFAULT_PROFILE] = Profile(DEFAULT_PROFILE, None, None, spec.arbitrary_uid)
    if override:
        profiles = {n: replace(p, override=override) for n, p in profiles.items()}
    return dict(sorted(profiles.items()))


def merge_values(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of a later `-f` file into the earlier ones: maps merge key by key, anything else
    (a list included) is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = value
    return out


def _assign(values: dict[str, Any], assignment: Assignment) -> None:
    """strvals' `ParseInto`: maps and lists on the way are the ones already there, or new; a list
    is padded with nulls up to the index."""
    node: Any = values
    path = assignment.path
    for step, below in zip(path, path[1:], strict=False):
        node = _step_into(node, step, dict if isinstance(below, str) else list, assignment)
    _put(node, path[-1], assignment.value)


def _step_into(node: Any, step: str | int, kind: type, assignment: Assignment) -> Any:
    if isinstance(step, str):
        child = node.get(step, kind())
        if not isinstance(child, kind):  # Helm's parser fails on the type assertion
            raise _conflict(assignment, step, kind)
        node[step] = child
        return child
    _pad(node, step)
    child = node[step]
    if kind is dict and not isinstance(child, dict):
        child = node[step] = {}  # strvals replaces what was there ("indices out of order")
    elif kind is list and child is None:
        child = node[step] = []
    elif not isinstance(child, kind):
        raise _conflict(assignment, f"[{step}]", kind)
    return child


def _put(node: Any, step: str | int, value: Any) -> None:
    if isinstance(step, int):
        _pad(node, step)
    node[step] = value


def _pad(items: list[Any], index: int) -> None:
    items.extend([None] * (index + 1 - len(items)))


def _conflict(assignment: Assignment, step: str, kind: type) -> RenderFailure:
    want = "a map" if kind is dict else "a list"
    return RenderFailure(
        f"--set {assignment.source}: {step} is not {want} in the values it is set into, so Helm "
        "cannot set it"
    )


def check_values_size(size: int, source: str) -> None:
    if size > MAX_VALUES_BYTES:
        raise RenderFailure(
            f"values file {source} is {size / 2**20:.1f} MiB; a values file may be at most "
            f"{MAX_VALUES_BYTES // 2**20} MiB (Helm's limit for a chart file)",
            source,
        )


def load_values(text: str, source: str) -> dict[str, Any]:
    """Parse a values file; a file that is not a mapping is an error naming the file and line."""
    try:
        data = bounded.load(text)
    except YAML_FAILURES as exc:
        line, problem = problem_at(exc, text)
        raise RenderFailure(
            f"values file {source}{f' line {line}' if line else ''}: not valid YAML: {problem}",
            source,
            line,
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = "a list" if isinstance(data, list) else f"a {type(data).__name__}"
        raise RenderFailure(
            f"values file {source} line 1: expected a mapping, found {kind}", source, 1
        )
    return data
