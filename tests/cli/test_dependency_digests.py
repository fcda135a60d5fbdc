"""Digests that do not match, through `chart-review review` with a real chart repository on
127.0.0.1: an archive other than the one the index pins, and a Chart.lock whose digest is not
that of the dependencies it locks. Neither is used, and the report says which and why."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.cli.main import main
from bot.report.exit_status import EXIT_FAILURE, EXIT_OK
from tests.support.chart_repo import ChartRepo, ChartSpec
from tests.support.gitbuilder import GitBuilder

CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-lib\n"
LIB = ChartSpec("lib", "1.0.0", templates={"cm.yaml": CONFIGMAP})


def chart_yaml(repository: str, version: str = "1.0.0") -> str:
    return (
        f"apiVersion: v2\nname: app\nversion: {version}\n"
        f"dependencies:\n  - name: lib\n    version: 1.0.0\n    repository: {repository}\n"
    )


def repo(tmp_path: Path, repository: str) -> GitBuilder:
    """develop has charts/app depending on lib 1.0.0; the PR `pr` bumps the chart."""
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/app/Chart.yaml", chart_yaml(repository)).write("charts/app/values.yaml", "{}\n")
    g.commit("app").branch("pr").write("charts/app/Chart.yaml", chart_yaml(repository, "1.0.1"))
    return g.commit("bump")


def review(g: GitBuilder, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    code = main([*args, "--no-open-prs", "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def index_digest(repo: ChartRepo, name: str, version: str) -> str:
    index = yaml.safe_load((repo.public / "index.yaml").read_text())
    (entry,) = [e for e in index["entries"][name] if e["version"] == version]
    return str(entry["digest"])


def test_an_archive_that_does_not_match_the_index_is_not_used(
    tmp_path: Path,
    chart_repo: ChartRepo,
    dependency_store: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (archive,) = chart_repo.add(LIB)
    pinned = index_digest(chart_repo, "lib", "1.0.0")
    archive.write_bytes(archive.read_bytes() + b"\0" * 512)  # served in place of what was indexed
    served = hashlib.sha256(archive.read_bytes()).hexdigest()

    code, report = review(repo(tmp_path, chart_repo.url), capsys)

    (chart,) = report["charts"]
    assert chart["not_reviewed"] == (
        f"dependency lib 1.0.0 from {chart_repo.url} could not be fetched: the archive's sha256 "
        f"is sha256:{served}, the index says {pinned} (charts/app/Chart.yaml line 5)"
    )
    (unreviewed,) = [f for f in report["findings"] if f["rule"] == "not-reviewed"]
    assert unreviewed["severity"] == "warning"  # never a pass, and the chart was never rendered
    assert code == EXIT_OK  # a warning, under the default --fail-on failure
    assert "/lib-1.0.0.tgz" in chart_repo.paths
    assert not list(dependency_store.glob("blobs/**/*.tgz"))  # nor kept for the next review


def test_a_chart_lock_whose_digest_does_not_match_its_dependencies_fails_the_render(
    tmp_path: Path, chart_repo: ChartRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    chart_repo.add(LIB)
    g = repo(tmp_path, chart_repo.url)
    # The versions agree with Chart.yaml; the digest Helm keeps of them does not.
    lock = (
        f"dependencies:\n- name: lib\n  repository: {chart_repo.url}\n  version: 1.0.0\n"
        f'digest: sha256:{"0" * 64}\ngenerated: "2026-01-01T00:00:00Z"\n'
    )
    g.write("charts/app/Chart.lock", lock).commit("lock it by hand")
    chart_repo.clear_requests()

    code, report = review(g, capsys)

    assert code == EXIT_FAILURE
    (failure,) = [f for f in report["findings"] if f["rule"] == "head-fails"]
    assert (failure["rule"], failure["severity"], failure["path"]) == (
        "head-fails",
        "failure",
        "charts/app/Chart.lock",
    )
    out_of_sync = (
        "the lock file (Chart.lock) is out of sync with the dependencies file (Chart.yaml)"
    )
    assert out_of_sync in failure["message"]
    (chart,) = report["charts"]
    assert out_of_sync in chart["not_reviewed"]
    # The base, without a lock, fetched lib once; the head stopped before downloading anything.
    assert chart_repo.paths.count("/lib-1.0.0.tgz") == 1
