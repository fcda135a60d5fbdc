"""A profile's values file is parsed once per blob, across sides and reviews, and never shared in a
way a later merge or override could change: bot/charts/profile_render.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import bot.charts.profile_render as profile_render
from bot.charts.profile_render import profile_values
from bot.charts.profiles import Profile, ValuesOverride
from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder


def test_a_values_file_is_parsed_once_per_blob(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    real = profile_render.load_values
    monkeypatch.setattr(
        profile_render, "load_values", lambda text, path: parsed.append(path) or real(text, path)
    )
    g = GitBuilder(tmp_path / "repo")
    g.write("app/ci/a-values.yaml", "replicas: 2\nimage: {tag: '1'}\n").commit("one")
    g.write("app/README.md", "docs\n").commit("docs")  # the values blob unchanged
    g.write("app/ci/a-values.yaml", "replicas: 3\n").commit("three")
    repo = GitRepo(g.path)
    profile = Profile("a", "app/ci/a-values.yaml")
    first, _ = profile_values(repo.tree(repo.resolve("HEAD~2")), profile)
    second, _ = profile_values(repo.tree(repo.resolve("HEAD~1")), profile)
    assert first is second and first == {"replicas": 2, "image": {"tag": "1"}}
    assert len(parsed) == 1
    third, _ = profile_values(repo.tree(repo.resolve("HEAD")), profile)
    assert third == {"replicas": 3} and len(parsed) == 2
    # An override applies to a copy: the parsed file a later review reads is as it was.
    override = ValuesOverride(sets=(), files=({"image": {"tag": "2"}},))
    changed, _ = profile_values(
        repo.tree(repo.resolve("HEAD~2")), Profile("a", profile.values_path, override=override)
    )
    assert changed["image"] == {"tag": "2"} and first["image"] == {"tag": "1"}
