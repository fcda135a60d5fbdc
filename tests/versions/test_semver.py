"""Chart versions read as Helm reads them: held against Helm itself, which loads a chart only when it
can read its `version` and then warns in `helm lint` when that is not strict SemVer 2."""

from __future__ import annotations

import io
import tarfile

import pytest

from bot.render.embedded import EmbeddedHelm
from bot.render.lint import LintSeverity
from bot.versions.semver import (
    coerce_version,
    is_greater,
    is_semver2,
    next_free_version,
    parse_version,
    styled,
)

# Each form a repository has been seen to write, or that Helm's reading draws a line through.
FORMS = [
    "1.2.3",
    "0.0.0",
    "v0.5.30",  # aws/eks-charts writes its device plugin's versions so
    "v1.2",
    "1.2",
    "1",
    "01.2.3",
    "1.02.3",
    "1.9-dev",
    "1.2.3-rc.1+build.01",
    "1.2.3-0",
    "1.2.3-0a",
    "V1.2.3",
    "1.2.3-01",
    "1.2.3-rc.01",
    "1.2.3.4",
    "1.2.3-",
    "=1.2.3",
    " 1.2.3",
    "latest",
    "1.2.x",
    "18446744073709551616.0.0",  # one over a uint64
]


def chart_archive(version: str) -> bytes:
    files = {
        "c/Chart.yaml": f'apiVersion: v2\nname: c\nversion: "{version}"\n',
        "c/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.fixture(scope="module")
def helm() -> EmbeddedHelm:
    return EmbeddedHelm()


@pytest.mark.parametrize("version", FORMS)
def test_a_version_is_read_exactly_when_helm_loads_the_chart(
    helm: EmbeddedHelm, version: str
) -> None:
    lint = helm.lint(chart_archive(version), {}, "default")
    errors = [e.message for e in lint if e.severity is LintSeverity.ERROR]
    warned = any("not a valid SemVerV2" in e.message for e in lint)
    assert (parse_version(version) is not None) == (not errors), errors
    assert is_semver2(version) == (not warned)


def test_what_helm_reads_is_ordered_as_a_helm_repository_orders_it() -> None:
    v = parse_version
    assert v("v0.5.30") == v("0.5.30") and v("1.2") == v("1.2.0") and v("01.2.3") == v("1.2.3")
    assert is_greater(v("v0.5.30"), v("v0.5.29"))  # type: ignore[arg-type]
    assert is_greater(v("1.10"), v("1.9.58"))  # type: ignore[arg-type]
    assert not is_greater(v("1.9"), v("1.9.58"))  # type: ignore[arg-type]
    assert is_greater(v("1.0.0"), v("1.0.0-rc.2"))  # type: ignore[arg-type]


def test_a_suggestion_keeps_the_repositorys_v() -> None:
    free = next_free_version("patch", [parse_version("v0.5.30")])
    assert styled(free, ["v0.5.30"]) == "v0.5.31"
    assert styled(free, ["0.5.30"]) == "0.5.31"
    # The first version Helm reads sets the style: an unreadable head's does not.
    assert styled(free, ["V0.5.30", "v0.5.29"]) == "v0.5.31"
    assert styled(free, [None, "0.5.29", "v1"]) == "0.5.31"


def test_what_helm_refuses_is_still_understood_for_the_suggestion() -> None:
    assert str(coerce_version("V1.2.3")) == "1.2.3"
    assert str(coerce_version("1.2.3-01")) == "1.2.3"
    assert coerce_version("latest") is None
