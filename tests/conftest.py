"""Fixtures shared by the whole suite: one fake GitHub, started once, reset for every test; every
JSON report a test makes in this process held to the report's schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.memos import PROCESS_MEMOS
from tests.support.app_scenario import Scenario, build_scenario
from tests.support.chart_repo import chart_repo  # noqa: F401 - a fixture for every test
from tests.support.fakegithub import FakeGitHub
from tests.support.helm_on_path import helm_on_path  # noqa: F401 - a fixture for every test
from tests.support.listener import listener  # noqa: F401 - a fixture for every test
from tests.support.logs import json_logs  # noqa: F401 - a fixture for every test
from tests.support.memos import cold_memos  # noqa: F401 - a fixture for every test
from tests.support.oci_registry import auth_registry, hanging_registry, oci_registry  # noqa: F401
from tests.support.report_schema import watching_reports


@pytest.fixture(autouse=True)
def fresh_process_memos() -> None:
    """Each test finds the process's memo store empty (bot/memos.py): code run outside a review,
    or an engine built without resources, keeps its memos there, and a test that counts parses
    must not meet another test's entry for the same blob."""
    PROCESS_MEMOS.clear()


@pytest.fixture(autouse=True)
def dependency_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test its own machine-wide dependency store (bot/render/deps/store.py): nothing one
    test fetched answers another's, and the user's own cache is never touched."""
    root = tmp_path / "dependency-store"
    monkeypatch.setenv("CHART_REVIEW_DEPENDENCY_CACHE", str(root))
    return root


@pytest.fixture(scope="session")
def _reports_refused() -> Iterator[list[str]]:
    with watching_reports() as refused:
        yield refused
    assert not refused, refused  # written after the last test's teardown


@pytest.fixture(autouse=True)
def reports_match_their_schema(_reports_refused: list[str]) -> Iterator[None]:
    """Fails the test, at its teardown, that wrote a JSON report bot/report/schema/report-1.json
    refuses (tests/support/report_schema.py): the schema is the report's public description. A
    report a module's fixture wrote counts against the first test that used it."""
    yield
    refused, _reports_refused[:] = list(_reports_refused), []
    if refused:
        pytest.fail("a report broke bot/report/schema/report-1.json:\n" + "\n".join(refused))


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
