"""Profiles by chart-testing's rule: `ci/*-values.yaml`, else the chart's defaults."""

from __future__ import annotations

from bot.engine.profiles import discover_profiles


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
