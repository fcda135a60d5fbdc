"""Fixtures shared by the whole suite: one fake GitHub, started once, reset for every test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app_scenario import Scenario, build_scenario
from tests.support.fakegithub import FakeGitHub


@pytest.fixture(scope="session")
def fake_github_server() -> Iterator[FakeGitHub]:
    """Starting the server costs ~0.2 s; a reset between tests costs nothing."""
    with FakeGitHub() as running:
        yield running


@pytest.fixture
def github(fake_github_server: FakeGitHub) -> Iterator[FakeGitHub]:
    """The fake GitHub with no state; the test fails if it sent a request GitHub would refuse."""
    fake_github_server.reset()
    yield fake_github_server
    fake_github_server.assert_no_violations()


@pytest.fixture
def scenario(tmp_path: Path, github: FakeGitHub) -> Scenario:
    """acme/charts on the fake, with PR #1 open (see tests/support/app_scenario.py)."""
    return build_scenario(tmp_path, github)
