"""What a renderer assumes when it is not told: its default Kubernetes version, read the only way
every renderer shares (Helm compiles it in): by rendering a chart that prints it."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, runtime_checkable

from bot.kube.capabilities import Capabilities
from bot.render.base import RenderFailure
from bot.render.cache import CachedRender, CacheKey, RenderCache

PROBE_TEMPLATE = "probe/templates/kube-version.txt"
# In the render cache under a name no chart tree id can be (those are 40 hex digits).
_PROBE_KEY = "probe:kube-version"


@cache
def probe_archive() -> bytes:
    """A chart that renders only its `.Capabilities.KubeVersion`, built once."""
    files = {
        "probe/Chart.yaml": "apiVersion: v2\nname: probe\nversion: 0.1.0\n",
        PROBE_TEMPLATE: "{{ .Capabilities.KubeVersion.Version }}",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@runtime_checkable
class SaysDefaults(Protocol):
    """A renderer that can say its default Kubernetes version (every one of this package can)."""

    version: str

    def default_kube_version(self) -> str | None: ...


def probe_kube_version(
    render: Callable[[bytes, dict[str, Any], str, str], dict[str, str]],
) -> str | None:
    """Renders the probe chart with `render` (a renderer's own, Helm's defaults)."""
    try:
        text = render(probe_archive(), {}, "probe", "default").get(PROBE_TEMPLATE, "")
    except RenderFailure:
        return None
    return text.strip() or None


def default_kube_version(renderer: object, cache: RenderCache) -> str | None:
    """The Kubernetes version `renderer` renders for when none is given; None when it cannot say.
    Cached like a render, so a review whose renders all come from the cache starts no Helm."""
    if not isinstance(renderer, SaysDefaults):
        return None
    key = CacheKey(_PROBE_KEY, "defaults", renderer.version, "probe", "default")
    hit = cache.get(key)
    if hit is None:
        found = renderer.default_kube_version()
        if found is None:
            return None  # maybe a passing failure (a busy machine): asked again next time
        hit = CachedRender({PROBE_TEMPLATE: found}, None)
        cache.put(key, hit)
    return (hit.manifests or {}).get(PROBE_TEMPLATE) or None


@dataclass(frozen=True)
class AssumedCapabilities:
    """What a review rendered for, for its report: the Kubernetes version (the renderer's own when
    none was given, None if it could not be read) and the API versions added by the config or the
    command line. Each chart's own CRDs add theirs on top; the report need not repeat them."""

    kube_version: str | None
    default: bool
    api_versions: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "kube_version": self.kube_version,
            "kube_version_default": self.default,
            "api_versions": list(self.api_versions),
        }


def assumed_capabilities(
    capabilities: Capabilities, renderer: object, cache: RenderCache
) -> AssumedCapabilities:
    if capabilities.kube_version is not None:
        return AssumedCapabilities(capabilities.kube_version, False, capabilities.api_versions)
    found = default_kube_version(renderer, cache)
    return AssumedCapabilities(found, True, capabilities.api_versions)
