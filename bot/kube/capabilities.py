"""What a render tells the chart about the cluster: `.Capabilities.KubeVersion` and the API versions
`.Capabilities.APIVersions.Has` finds, as `helm template --kube-version` and `--api-versions` set
them. Unset, each is the renderer's own default (Helm's compiled-in Kubernetes version, its built-in
API groups)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.errors import ChartReviewError

# What Helm's version parser accepts for a Kubernetes version, less its leniency for a bare major
# (`1`): a Kubernetes version names at least its minor.
_KUBE_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
# `version`, `group/version` or `group/version/Kind`: the forms APIVersions.Has is asked about.
# The group is a DNS subdomain, the version a DNS label, the kind a name.
_API_VERSION_RE = re.compile(
    r"^(?:[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?/)?[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
    r"(?:/[A-Za-z][A-Za-z0-9]*)?$"
)


class CapabilitiesError(ChartReviewError):
    """A Kubernetes or API version that cannot be used; the message names where it was given,
    `reason` says what is wrong with it."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class Capabilities:
    """`kube_version` is canonical (`v1.29.0`), None for the renderer's default; `api_versions` are
    those added to the renderer's built-in ones, sorted and without repeats."""

    kube_version: str | None = None
    api_versions: tuple[str, ...] = ()

    def adding(self, api_versions: Iterable[str]) -> Capabilities:
        merged = tuple(sorted({*self.api_versions, *api_versions}))
        return Capabilities(self.kube_version, merged)

    @property
    def cache_id(self) -> str:
        """For the render cache key: empty when nothing differs from the renderer's defaults, so
        that renders cached before capabilities existed stay valid."""
        if self.kube_version is None and not self.api_versions:
            return ""
        return f"kube={self.kube_version or ''};api={','.join(self.api_versions)}"


DEFAULT_CAPABILITIES = Capabilities()


def parse_kube_version(text: str, where: str) -> str:
    """`1.29`, `v1.29.0` → `v1.29.0`, Helm 3's own spelling of `--kube-version 1.29`."""
    match = _KUBE_VERSION_RE.match(text.strip())
    if match is None:
        raise CapabilitiesError(
            where,
            f"{text!r} is not a Kubernetes version (expected MAJOR.MINOR[.PATCH], "
            "such as 1.29 or v1.29.0)",
        )
    major, minor, patch, pre, build = match.groups()
    return f"v{int(major)}.{int(minor)}.{int(patch or 0)}{pre or ''}{build or ''}"


def parse_api_versions(items: Iterable[str], where: str) -> tuple[str, ...]:
    """Each item may list several, comma-separated, as `helm template --api-versions` takes them."""
    out = set()
    for item in items:
        for part in item.split(","):
            name = part.strip()
            if not name:
                continue
            if not _API_VERSION_RE.match(name):
                raise CapabilitiesError(
                    where,
                    f"{name!r} is not an API version (expected GROUP/VERSION or "
                    "GROUP/VERSION/Kind, such as monitoring.coreos.com/v1)",
                )
            out.add(name)
    return tuple(sorted(out))


def crd_api_versions(crd: Mapping[str, Any]) -> tuple[str, ...]:
    """The API versions a CustomResourceDefinition adds once installed: `group/version` and
    `group/version/Kind` (APIVersions.Has is asked either) for each version it serves. Both
    `apiextensions.k8s.io/v1` (`versions[].served`) and v1beta1's single `version` are read."""
    if crd.get("kind") != "CustomResourceDefinition":
        return ()
    spec = crd.get("spec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("group"), str):
        return ()
    names = spec.get("names")
    kind = names.get("kind") if isinstance(names, Mapping) else None
    served = [
        v.get("name")
        for v in spec.get("versions") or ()
        if isinstance(v, Mapping) and v.get("served", True) is not False
    ]
    if not served and isinstance(spec.get("version"), str):
        served = [spec["version"]]
    out = []
    for version in served:
        if isinstance(version, str) and version:
            out.append(f"{spec['group']}/{version}")
            if isinstance(kind, str) and kind:
                out.append(f"{spec['group']}/{version}/{kind}")
    return tuple(out)
