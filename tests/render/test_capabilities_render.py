"""Capabilities through each renderer: the sandbox's render processes, the embedded SDK, the helm
command line's flags, and the render cache's key."""

from __future__ import annotations

import io
import tarfile

import pytest

from bot.kube.capabilities import (
    Capabilities,
    CapabilitiesError,
    parse_api_versions,
    parse_kube_version,
)
from bot.render.base import RenderFailure
from bot.render.cache import CacheKey, RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.render.helm_cli import capability_flags
from bot.render.probe import default_kube_version
from bot.render.sandbox import SandboxedHelm

TEMPLATE = """\
kube: {{ .Capabilities.KubeVersion.Version }}
group: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}
kind: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" }}
"""
WANTED = Capabilities(
    "v1.29.0", ("monitoring.coreos.com/v1", "monitoring.coreos.com/v1/ServiceMonitor")
)


def archive(kube_version: str | None = None) -> bytes:
    chart = "apiVersion: v2\nname: x\nversion: 1.0.0\n"
    if kube_version is not None:
        chart += f"kubeVersion: {kube_version!r}\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in {"chart/Chart.yaml": chart, "chart/templates/t.txt": TEMPLATE}.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def test_the_render_processes_pass_the_capabilities_to_helm() -> None:
    with SandboxedHelm(workers=1) as helm:
        told = helm.render(archive(), {}, "r", "default", WANTED)["x/templates/t.txt"]
        default = helm.render(archive(), {}, "r", "default")["x/templates/t.txt"]
    assert told == "kube: v1.29.0\ngroup: true\nkind: true\n"
    assert "group: false\nkind: false" in default


def test_the_render_processes_refuse_an_excluded_kube_version_as_helm_does() -> None:
    with SandboxedHelm(workers=1) as helm, pytest.raises(RenderFailure) as caught:
        helm.render(archive(">=1.30.0-0"), {}, "r", "default", WANTED)
    assert caught.value.message == (
        "chart requires kubeVersion: >=1.30.0-0 which is incompatible with Kubernetes v1.29.0"
    )
    assert (caught.value.template, caught.value.line) == ("chart/Chart.yaml", 4)


def test_each_renderer_says_its_default_kube_version() -> None:
    with SandboxedHelm(workers=1) as sandboxed:
        assert sandboxed.default_kube_version() == EmbeddedHelm().default_kube_version()


def test_the_sandbox_reads_its_default_kube_version_once() -> None:
    # Every render process runs the same Helm: a second review's probe would wait for a process
    # its renders keep busy.
    with SandboxedHelm(workers=1) as sandboxed:
        found = sandboxed.default_kube_version()
        probes: list[bytes] = []
        render = sandboxed.render
        sandboxed.render = lambda archive, *rest: probes.append(archive) or render(archive, *rest)  # type: ignore[method-assign]
        assert sandboxed.default_kube_version() == found is not None
        assert probes == []


def test_helms_default_kube_version_is_read_and_cached() -> None:
    helm, cache = EmbeddedHelm(), RenderCache()
    found = default_kube_version(helm, cache)
    rendered = helm.render(archive(), {}, "r", "default")["x/templates/t.txt"]
    assert found is not None and rendered.startswith(f"kube: {found}\n")
    assert found == helm.default_kube_version()

    class Unavailable:
        version = helm.version

        def default_kube_version(self) -> str | None:
            raise AssertionError("asked again: the probe was not cached")

    assert default_kube_version(Unavailable(), cache) == found


def test_helm_template_is_given_its_own_flags_only_when_told() -> None:
    assert capability_flags(Capabilities()) == []
    assert capability_flags(WANTED) == [
        "--kube-version",
        "v1.29.0",
        "--api-versions",
        "monitoring.coreos.com/v1",
        "--api-versions",
        "monitoring.coreos.com/v1/ServiceMonitor",
    ]


def test_the_cache_key_tells_capabilities_apart_and_keeps_the_old_address_without() -> None:
    plain = CacheKey("tree", "values", "helm", "release", "default")
    assert plain == CacheKey("tree", "values", "helm", "release", "default", "")
    other = CacheKey("tree", "values", "helm", "release", "default", WANTED.cache_id)
    assert other.digest != plain.digest
    assert Capabilities().cache_id == ""
    assert WANTED.cache_id != Capabilities("v1.29.0").cache_id


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1.29", "v1.29.0"),
        ("v1.29.0", "v1.29.0"),
        (" 1.30.2 ", "v1.30.2"),
        ("1.29.3-eks-1", "v1.29.3-eks-1"),
    ],
)
def test_kube_versions_are_read_as_helm_spells_them(text: str, canonical: str) -> None:
    assert parse_kube_version(text, "--kube-version") == canonical


def test_a_bad_kube_version_names_where_it_was_given() -> None:
    with pytest.raises(CapabilitiesError, match=r"^--kube-version: 'latest' is not a Kubernetes"):
        parse_kube_version("latest", "--kube-version")


def test_api_versions_are_comma_separated_repeatable_and_deduplicated() -> None:
    given = ["monitoring.coreos.com/v1,v1", "policy/v1beta1/PodSecurityPolicy", "v1"]
    assert parse_api_versions(given, "--api-versions") == (
        "monitoring.coreos.com/v1",
        "policy/v1beta1/PodSecurityPolicy",
        "v1",
    )
    with pytest.raises(CapabilitiesError, match=r"^--api-versions: 'a b/v1' is not an API"):
        parse_api_versions(["a b/v1"], "--api-versions")
