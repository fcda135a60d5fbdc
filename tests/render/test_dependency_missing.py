"""A chart whose Chart.yaml declares dependencies it does not carry under charts/: Helm's `helm
template` refuses it, and the review says which, in words that read right for one or several."""

from __future__ import annotations

import io
import tarfile

import pytest

from bot.render.base import RenderFailure, is_dependency_missing
from bot.render.embedded import EmbeddedHelm

TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


def archive(names: list[str]) -> bytes:
    deps = "".join(
        f"  - name: {n}\n    version: 1.0.0\n    repository: https://charts.example.test\n"
        for n in names
    )
    files = {
        "chart/Chart.yaml": f"apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n{deps}",
        "chart/templates/cm.yaml": TEMPLATE,
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


@pytest.mark.parametrize(
    ("names", "said"),
    [
        (
            ["redis"],
            "dependency redis is declared in Chart.yaml but missing from charts/ "
            "(`helm dependency build` fetches it;",
        ),
        (
            ["redis", "kube-state-metrics"],
            "dependencies redis, kube-state-metrics are declared in "
            "Chart.yaml but missing from charts/ (`helm dependency build` fetches them;",
        ),
    ],
)
def test_missing_dependencies_are_named_in_one_sentence(names: list[str], said: str) -> None:
    with pytest.raises(RenderFailure) as failed:
        EmbeddedHelm().render(archive(names), {}, "release", "default")
    assert str(failed.value).startswith(said)
    assert failed.value.line == 5  # the first one's declaration in Chart.yaml
    assert is_dependency_missing(str(failed.value))


def test_a_failure_cached_in_the_old_words_is_still_known() -> None:
    """Render failures are cached on disk: one written before the wording changed still counts."""
    assert is_dependency_missing(
        "dependency a, b is declared in Chart.yaml but missing from charts/ (`helm dependency "
        "build` fetches it; the review renders only what the PR commits)"
    )


def test_a_v1_chart_s_missing_dependency_is_named_in_requirements_yaml() -> None:
    """An apiVersion v1 chart declares its dependencies in requirements.yaml, which Helm reads."""
    files = {
        "chart/Chart.yaml": "apiVersion: v1\nname: c\nversion: 1.0.0\n",
        "chart/requirements.yaml": (
            "dependencies:\n  - name: redis\n    version: 1.0.0\n"
            "    repository: https://charts.example.test\n"
        ),
        "chart/templates/cm.yaml": TEMPLATE,
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(RenderFailure) as failed:
        EmbeddedHelm().render(out.getvalue(), {}, "release", "default")
    assert str(failed.value).startswith(
        "dependency redis is declared in requirements.yaml but missing from charts/"
    )
    assert (failed.value.template, failed.value.line) == ("chart/requirements.yaml", 2)
