"""A chart's values profiles at one side (chart-testing's `ci/*.yaml` rule plus config entries), and
the values files they name, parsed with errors that name the file and line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.engine.config import ProfileSpec
from bot.engine.yaml import bounded
from bot.engine.yaml.errors import YAML_FAILURES
from bot.render.base import RenderFailure

DEFAULT_PROFILE = "default"
CI_VALUES_SUFFIX = "-values.yaml"
# Helm's loader refuses a chart file over 5 MiB (`MaxDecompressedFileSize`); a CI values file is held
# to the same bound before it is parsed, in the reviewing process.
MAX_VALUES_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Profile:
    """A values profile of a chart at one side: where its values come from, and its flags."""

    name: str
    values_path: str | None  # repository path of the values file; None for the chart's defaults
    inline: Mapping[str, Any] | None = None
    arbitrary_uid: bool = False


def profile_name(ci_file: str) -> str:
    """`ci/eks-values.yaml` is profile `eks`."""
    return ci_file.rsplit("/", 1)[-1][: -len(CI_VALUES_SUFFIX)]


def discover_profiles(
    chart_dir: str, paths: tuple[str, ...], extra: list[ProfileSpec]
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
    return dict(sorted(profiles.items()))


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
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise RenderFailure(
            f"values file {source}{f' line {line}' if line else ''}: not valid YAML: "
            f"{getattr(exc, 'problem', exc)}",
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
