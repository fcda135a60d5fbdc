"""Hostile chart archives through the command line: a vendored archive of empty members, a chart's
archives over the budget together, another open PR's hostile tree, a fetched dependency whose
schema reaches out, a schema behind a byte order mark. Each is refused before Helm sees it, naming
the file and the cap, and costs only its own review."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.model.context import OpenPR
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.tarball.limits import LIMITS
from bot.tarball.reader import members
from checks import REGISTRY
from tests.support.chart_repo import ChartRepo, ChartSpec
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.tarballs import configmap, empty_members, subchart

VENDORED = "app/charts/redis-1.0.0.tgz"
OVER_THE_CAP = (
    f"{VENDORED}: more than 20,000 members, the most the review reads of one archive and the "
    "archives inside it; refused, not handed to Helm"
)
MARKER = "SECRET-KEY-MATERIAL"


def chart_repo_at(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    return g.commit("app 1.0.0")


def vendor(g: GitBuilder, path: str, data: bytes) -> GitBuilder:
    target = g.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return g


def review(g: GitBuilder, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    assert main([*args, "--format", "json", *extra]) in (0, 1)
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def findings(report: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["check"] == check]


def test_a_vendored_archive_of_empty_members_is_not_reviewed_naming_the_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = chart_repo_at(tmp_path).branch("pr")
    vendor(g, VENDORED, empty_members(LIMITS.members + 1_000)).commit("vendor redis")
    report = review(g, capsys, "--no-open-prs")
    unsafe, unreviewed = (
        next(f for f in findings(report, "render") if f["rule"] == rule)
        for rule in ("unsafe-tree", "not-reviewed")
    )
    assert unsafe["severity"] == "failure"
    assert unsafe["message"] == f"{OVER_THE_CAP}. The chart was not rendered."
    assert unreviewed["severity"] == "warning"
    assert OVER_THE_CAP in unreviewed["message"]


def test_a_charts_archives_share_one_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = chart_repo_at(tmp_path).branch("pr")
    each = LIMITS.members // 2 - 10  # under the cap alone, over it three together
    for name in ("a", "b", "c"):
        vendor(g, f"app/charts/{name}-1.0.0.tgz", empty_members(each, f"{name}/t.yaml"))
    g.commit("vendor three")
    report = review(g, capsys, "--no-open-prs")
    (unsafe,) = [f for f in findings(report, "render") if f["rule"] == "unsafe-tree"]
    assert unsafe["message"] == (
        "app: its vendored archives hold more than 20,000 members, the most the review reads of "
        "one chart's archives together; refused, not handed to Helm. The chart was not rendered."
    )


class Recording:
    """The embedded renderer, keeping whether each archive it was handed held the hostile one."""

    def __init__(self) -> None:
        self.helm = EmbeddedHelm()
        self.version = self.helm.version
        self.vendored: list[bool] = []

    def render(
        self,
        archive: bytes,
        values: Any,
        release: str,
        namespace: str,
        capabilities: Capabilities = DEFAULT_CAPABILITIES,
    ) -> dict[str, str]:
        self.vendored.append(any(m.path.endswith("redis-1.0.0.tgz") for m in members(archive)))
        return self.helm.render(archive, values, release, namespace, capabilities)


def test_a_hostile_open_pr_is_left_out_of_the_duplicates_comparison_with_a_notice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = chart_repo_at(tmp_path)
    limits = "  limits:\n    memory: 64Mi\n"
    bigger = chart_files()["app/values.yaml"].replace(limits, "  limits:\n    memory: 128Mi\n")
    g.branch("hostile").write("app/values.yaml", bigger)
    vendor(g, VENDORED, empty_members(LIMITS.members + 1_000)).commit("vendor redis")
    g.checkout("develop").branch("twin").write("app/values.yaml", bigger).commit("more memory")
    g.checkout("develop").branch("pr").write("app/values.yaml", bigger).commit("more memory too")
    prs = ("--open-pr", f"1={g.sha('hostile')}", "--open-pr", f"2={g.sha('twin')}")
    report = review(g, capsys, *prs)
    twin, notice = findings(report, "duplicates")  # by severity: the warning first
    assert (notice["rule"], notice["severity"], notice["data"]["pr"]) == (
        "not-compared",
        "notice",
        1,
    )
    assert notice["title"] == "#1 was not compared: its chart tree is refused"
    assert OVER_THE_CAP in notice["message"]
    # The refused PR took no place: the next one was compared, and found.
    assert (twin["rule"], twin["data"]["pr"]) == ("same-change", 2)
    # And the hostile archive never reached Helm in this review.
    renderer = Recording()
    engine = Engine(GitRepo(g.path), renderer, REGISTRY, RenderCache())
    others = (OpenPR(1, g.sha("hostile")), OpenPR(2, g.sha("twin")))
    engine.review(ReviewInput(base="develop", head="pr", open_prs=others))
    assert renderer.vendored and not any(renderer.vendored)


def test_a_fetched_dependency_whose_schema_reaches_out_is_refused_even_unconfined(
    tmp_path: Path,
    chart_repo: ChartRepo,
    listener: tuple[int, list[bytes]],
    helm_on_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    port, seen = listener
    schema = json.dumps({"properties": {"x": {"$ref": f"http://127.0.0.1:{port}/meta"}}})
    lib = ChartSpec(
        "lib",
        "1.0.0",
        templates={"cm.yaml": configmap("lib")},
        files={"values.schema.json": schema},
    )
    chart_repo.add(lib)
    g = GitBuilder(tmp_path / "repo")
    chart_yaml = (
        "apiVersion: v2\nname: app\nversion: 1.0.0\n"
        f"dependencies:\n  - name: lib\n    version: 1.0.0\n    repository: {chart_repo.url}\n"
    )
    g.write("app/Chart.yaml", chart_yaml).write("app/values.yaml", "{}\n").commit("app")
    g.branch("pr").write("app/values.yaml", "x: 1\n").commit("touch")
    # The helm binary renders with no sandbox at all: only the pre-check stands in the way.
    report = review(g, capsys, "--no-open-prs", "--renderer", "helm")
    assert seen == []  # no connection, not even one
    (chart,) = report["charts"]
    assert chart["not_reviewed"] == (
        f"dependency lib 1.0.0 from {chart_repo.url}: lib/values.schema.json: "
        f'"$ref": "http://127.0.0.1:{port}/meta" names a document outside the schema; '
        "refused, not handed to Helm (app/Chart.yaml line 5)"
    )


def test_a_schema_behind_a_byte_order_mark_is_left_out_even_unconfined(
    tmp_path: Path, helm_on_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "app.pem"
    marker.write_text(MARKER)
    g = chart_repo_at(tmp_path).branch("pr")
    schema = "\ufeff" + json.dumps({"properties": {"key": {"$ref": f"file://{marker}"}}})
    g.write("app/values.schema.json", schema).commit("validate values")
    report = review(g, capsys, "--no-open-prs", "--renderer", "helm")
    assert "invalid character" not in json.dumps(report)  # what Helm says of the file it read
    (finding,) = findings(report, "render")
    assert (finding["rule"], finding["path"]) == ("schema-not-validated", "app/values.schema.json")


def test_a_vendored_archive_with_a_nested_escaping_schema_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = subchart("common", extra={"values.schema.json": json.dumps({"$ref": "file:///x"})})
    redis = subchart("redis", extra={"charts/common-2.0.0.tgz": common})
    g = chart_repo_at(tmp_path).branch("pr")
    vendor(g, VENDORED, redis).commit("vendor redis")
    report = review(g, capsys, "--no-open-prs")
    (unsafe,) = [f for f in findings(report, "render") if f["rule"] == "unsafe-tree"]
    assert unsafe["message"].startswith(
        f"{VENDORED}: redis/charts/common-2.0.0.tgz › common/values.schema.json: "
        '"$ref": "file:///x" names a document outside the schema; refused, not handed to Helm'
    )
