"""Profiles by chart-testing's rule: `ci/*-values.yaml`, else the chart's defaults."""

from __future__ import annotations

import pytest

from bot.charts.profiles import NO_OVERRIDE, Assignment, ValuesOverride, discover_profiles
from bot.render.base import RenderFailure


def test_only_ci_values_files_are_profiles_as_ct_globs_them() -> None:
    paths = (
        "app/ci/eks-values.yaml",
        "app/ci/aks-values.yaml",
        "app/ci/kind-config.yaml",  # a kind cluster's config, not values
        "app/ci/tests.yml",
        "app/ci/old-values.yml",  # ct globs .yaml only
        "app/ci/-values.yaml",  # no name
        "app/ci/nested/x-values.yaml",
        "app/values.yaml",
    )
    profiles = discover_profiles("app", paths, [])
    assert {n: p.values_path for n, p in profiles.items()} == {
        "aks": "app/ci/aks-values.yaml",
        "eks": "app/ci/eks-values.yaml",
    }


def test_without_ci_values_the_defaults_are_the_one_profile() -> None:
    profiles = discover_profiles("app", ("app/ci/kind-config.yaml", "app/values.yaml"), [])
    assert {n: p.values_path for n, p in profiles.items()} == {"default": None}


# The command line's --values / --set, applied to a profile's values as Helm applies them.


def _sets(*items: tuple[tuple[str | int, ...], object]) -> ValuesOverride:
    return ValuesOverride(sets=tuple(Assignment(p, v, "test") for p, v in items))


def test_every_profile_carries_the_override() -> None:
    override = _sets((("a",), 1))
    paths = ("app/ci/eks-values.yaml", "app/ci/aks-values.yaml")
    profiles = discover_profiles("app", paths, [], override)
    assert {p.override for p in profiles.values()} == {override}
    assert discover_profiles("app", paths, [])["eks"].override == NO_OVERRIDE


def test_files_merge_after_the_values_and_sets_go_last() -> None:
    override = ValuesOverride(
        files=({"r": {"cpu": "1", "mem": "1Gi"}}, {"r": {"cpu": "2"}}),
        sets=(Assignment(("r", "cpu"), "3", "r.cpu=3"),),
    )
    assert override.apply({"r": {"cpu": "0", "gpu": 1}}) == {
        "r": {"cpu": "3", "mem": "1Gi", "gpu": 1}
    }


def test_a_list_index_sets_into_the_list_already_there_and_pads_with_nulls() -> None:
    values = {"hosts": ["a", "b"], "ports": [{"name": "http", "port": 80}]}
    override = _sets((("hosts", 1), "x"), (("ports", 0, "port"), 8080), (("extra", 2), True))
    assert override.apply(values) == {
        "hosts": ["a", "x"],
        "ports": [{"name": "http", "port": 8080}],
        "extra": [None, None, True],
    }
    assert values["hosts"] == ["a", "b"]  # the profile's own values are left as they were


def test_setting_below_a_scalar_fails_as_helm_does() -> None:
    with pytest.raises(RenderFailure, match=r"--set image.tag=1: image is not a map"):
        ValuesOverride(sets=(Assignment(("image", "tag"), 1, "image.tag=1"),)).apply({"image": "x"})
    with pytest.raises(RenderFailure, match=r"hosts is not a list"):
        _sets((("hosts", 0), "a")).apply({"hosts": {"a": 1}})


def test_the_content_id_tells_overrides_apart() -> None:
    ids = {
        NO_OVERRIDE.content_id,
        _sets((("a",), 1)).content_id,
        _sets((("a",), "1")).content_id,
        ValuesOverride(files=({"a": 1},)).content_id,
    }
    assert len(ids) == 4
    assert _sets((("a",), 1)).content_id == _sets((("a",), 1)).content_id
