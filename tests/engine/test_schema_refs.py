"""A values.schema.json cannot make Helm read a file outside the chart or open a connection: the
schema is checked before the chart is handed to the render sandbox (bot/charts/schemas.py)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from bot.charts.schemas import MAX_SCHEMA_BYTES, archive_escape, schema_escape
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.report import Report
from bot.render.cache import RenderCache
from bot.render.sandbox import SandboxedHelm, SandboxLimits
from bot.report.markdown import to_markdown
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

MARKER = "SECRET-KEY-MATERIAL"


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"$ref": "file:///etc/passwd"}, '"$ref": "file:///etc/passwd" names a document outside'),
        ({"$ref": "http://169.254.169.254/latest"}, '"$ref": "http://169.254.169.254/latest"'),
        ({"$ref": "../../etc/passwd"}, '"$ref": "../../etc/passwd" names a document outside'),
        ({"properties": {"a": {"items": {"$ref": "x.json#/y"}}}}, '"$ref": "x.json#/y"'),
        ({"allOf": [{"$dynamicRef": "https://x/s"}]}, '"$dynamicRef": "https://x/s"'),
        ({"$id": "file:///etc/", "$ref": "#/definitions/a"}, '"$id": "file:///etc/" moves'),
        ({"$schema": "http://127.0.0.1:9/meta"}, '"$schema": "http://127.0.0.1:9/meta" is not'),
        ({"definitions": {"a": {"not": {"$ref": "passwd"}}}}, '"$ref": "passwd"'),
    ],
)
def test_a_reference_that_leaves_the_schema_is_named(schema: object, why: str) -> None:
    found = schema_escape(json.dumps(schema))
    assert found is not None and found.startswith(why)


@pytest.mark.parametrize(
    "schema",
    [
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"a": {}}},
        {"properties": {"r": {"$ref": "#/definitions/r"}}, "definitions": {"r": {}}},
        {"properties": {"$ref": {"type": "string"}, "id": {"type": "string"}}},  # names, not refs
    ],
)
def test_schemas_that_stay_inside_pass(schema: object) -> None:
    assert schema_escape(json.dumps(schema)) is None


def test_a_schema_too_deep_to_parse_is_not_handed_on() -> None:
    deep = '{"not": ' * 5_000 + '{"$ref": "file:///x"}' + "}" * 5_000
    assert schema_escape(deep) == "it nests too deep to be inspected"
    nested = '{"not": ' * 500 + '{"$ref": "file:///x"}' + "}" * 500
    assert schema_escape(nested) == '"$ref": "file:///x" names a document outside the schema'


def review(g: GitBuilder) -> Report:
    with SandboxedHelm(SandboxLimits()) as sandbox:
        engine = Engine(GitRepo(g.path), sandbox, REGISTRY, RenderCache())
        return engine.review(ReviewInput(base="develop", head="pr")).report


def test_a_schema_reaching_a_file_and_the_network_reads_and_opens_nothing(
    tmp_path: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, seen = listener
    marker = tmp_path / "app.pem"
    marker.write_text(MARKER)
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr")
    schema = {
        "type": "object",
        "properties": {
            "key": {"$ref": f"file://{marker}"},
            "meta": {"$ref": f"http://127.0.0.1:{port}/latest/meta-data"},
        },
    }
    g.write("app/values.schema.json", json.dumps(schema)).commit("validate values")
    report = review(g)
    out = report.to_json_text() + to_markdown(report, REGISTRY.sections())
    assert MARKER[:1] + "'" not in out and MARKER not in out and "invalid character" not in out
    assert seen == []  # no connection, not even one
    (finding,) = report.findings_for("render")
    assert (finding.rule, finding.severity, finding.path) == (
        "schema-not-validated",
        "warning",
        "app/values.schema.json",
    )
    assert "names a document outside the schema" in finding.message
    assert not report.charts[0].render_errors  # the chart itself was rendered and reviewed


def tgz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_a_vendored_subchart_whose_schema_reaches_out_is_refused(tmp_path: Path) -> None:
    sub = tgz(
        {
            "sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 1.0.0\n",
            "sub/values.schema.json": json.dumps({"$ref": "file:///etc/shadow"}),
        }
    )
    assert archive_escape(sub) == (
        'sub/values.schema.json: "$ref": "file:///etc/shadow" names a document outside the schema'
    )
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr")
    (g.path / "app" / "charts").mkdir()
    (g.path / "app" / "charts" / "sub-1.0.0.tgz").write_bytes(sub)
    g.commit("vendor sub")
    report = review(g)
    (finding,) = [f for f in report.findings_for("render") if f.rule != "not-reviewed"]
    assert (finding.rule, finding.severity) == ("unsafe-tree", "failure")
    assert "app/charts/sub-1.0.0.tgz: sub/values.schema.json" in finding.message


def test_a_schema_larger_than_helm_loads_is_not_parsed() -> None:
    assert schema_escape(" " * (MAX_SCHEMA_BYTES + 1)) == (
        "it is larger than 5 MiB, the most Helm loads of one file"
    )
