"""`helm lint` in the render sandbox (bot/render/lint.py): one request renders and lints, under
the sandbox's limits and confinement, and both are cached together."""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.render.lint import LintEntry, LintingRenderer, LintSeverity, can_lint
from bot.render.sandbox import SandboxedHelm, SandboxLimits
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

LIMITS = SandboxLimits(wall_seconds=10.0, cpu_seconds=1, memory_bytes=256 * 2**20)
CHART = "apiVersion: v2\nname: c\nversion: 0.1.0\n"
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.name }}\n"
NO_SELECTOR = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n"
    "    spec:\n      containers: [{name: a, image: b}]\n"
)
# Lint renders as release `test-release` (Helm's), the review as `release`: a loop only lint runs.
LOOP_UNDER_LINT = (
    '{{- if eq .Release.Name "test-release" }}'
    "{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}{{ end }}\n"
)
MARKER = "SECRET-KEY-MATERIAL"


def archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in {"Chart.yaml": CHART, **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"chart/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxedHelm]:
    with SandboxedHelm(LIMITS, workers=1) as helm:
        yield helm


def above_info(entries: tuple[LintEntry, ...] | None) -> list[tuple[int, str, str]]:
    assert entries is not None
    return [(e.severity, e.path, e.message) for e in entries if e.severity > LintSeverity.INFO]


def test_one_request_renders_and_lints(sandbox: SandboxedHelm) -> None:
    files = {"templates/d.yaml": NO_SELECTOR, "templates/cm.yaml": CONFIG_MAP}
    out = sandbox.render_linted(archive(files), {"name": "Bad_Name"}, "release", "default")
    assert out.error is None and out.manifests is not None
    assert "name: Bad_Name" in out.manifests["c/templates/cm.yaml"]
    naming, selector = sorted(above_info(out.lint))
    assert naming[:2] == (LintSeverity.WARNING, "templates/cm.yaml")
    assert naming[2].startswith(
        'object name does not conform to Kubernetes naming requirements: "Bad_Name"'
    )
    assert selector == (
        LintSeverity.ERROR,
        "templates/d.yaml",
        'a Deployment must contain matchLabels or matchExpressions, and "d" does not',
    )
    assert not out.transient


def test_a_chart_that_fails_to_render_is_linted_too(sandbox: SandboxedHelm) -> None:
    broken = {"templates/cm.yaml": CONFIG_MAP + "data: {a: {{ .Values.x.y.z }}}\n"}
    out = sandbox.render_linted(archive(broken), {"name": "ok"}, "release", "default")
    assert out.manifests is None and out.error is not None
    assert "nil pointer evaluating interface {}.y" in out.error.message
    ((severity, path, message),) = above_info(out.lint)
    assert (severity, path) == (LintSeverity.ERROR, "templates/")
    assert message.startswith("c/templates/cm.yaml:5:")


def test_a_lint_that_loops_is_stopped_by_the_limits_and_the_render_is_kept(
    sandbox: SandboxedHelm,
) -> None:
    files = {"templates/cm.yaml": CONFIG_MAP + LOOP_UNDER_LINT}
    started = time.monotonic()
    out = sandbox.render_linted(archive(files), {"name": "ok"}, "release", "default")
    assert time.monotonic() - started < LIMITS.wall_seconds
    assert out.error is None and out.manifests is not None
    assert above_info(out.lint) == [
        (
            LintSeverity.WARNING,
            "",
            "helm lint did not finish: render exceeded its time limit (1 s of CPU time)",
        )
    ]
    assert not out.transient  # it would loop again: cached like the render
    # The process that ran out of CPU was replaced: the next request renders and lints.
    again = sandbox.render_linted(
        archive({"templates/cm.yaml": CONFIG_MAP}), {"name": "x"}, "r", "default"
    )
    assert again.error is None and above_info(again.lint) == []


def test_a_template_that_loops_under_the_render_is_not_linted(sandbox: SandboxedHelm) -> None:
    loop = "{{ range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n"
    out = sandbox.render_linted(archive({"templates/l.yaml": loop}), {}, "release", "default")
    assert out.error is not None and out.error.message == LIMITS.cpu_exceeded
    assert out.lint is None  # not known, never "lint-clean"


def test_lint_reads_no_file_outside_the_chart_and_leaves_nothing_behind(tmp_path: Path) -> None:
    secret = tmp_path / "app.pem"
    secret.write_text(MARKER)
    files = {
        "values.schema.json": json.dumps({"$ref": f"file://{secret}"}),
        "templates/cm.yaml": CONFIG_MAP,
    }
    sandbox = SandboxedHelm(LIMITS, workers=1)
    out = sandbox.render_linted(archive(files), {"name": "ok"}, "release", "default")
    said = " ".join(message for _, _, message in above_info(out.lint))
    assert "permission denied" in said
    assert MARKER not in said and "invalid character" not in said
    (process,) = sandbox._all
    # The archive is gone; the chart Helm unpacked from it is kept for the side's next lint
    # (bot/render/expanded.py), in the process's own scratch directory, until it ends.
    (kept,) = os.listdir(process.scratch)
    assert kept.startswith("lint-") and not list(Path(process.scratch).rglob("*.tgz"))
    assert oct(os.stat(process.scratch).st_mode & 0o777) == "0o700"
    sandbox.close()
    assert not os.path.exists(process.scratch)


def test_a_warm_cache_lints_nothing_and_says_the_same(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0").branch("pr").write("app/templates/d.yaml", NO_SELECTOR).commit("d")

    def lint_findings(helm: SandboxedHelm) -> list[tuple[str, str, str | None]]:
        engine = Engine(GitRepo(g.path), helm, REGISTRY, RenderCache(tmp_path / "cache"))
        report = engine.review(ReviewInput(base="develop", head="pr")).report
        return [(f.severity, f.profile or "", f.path) for f in report.findings if f.check == "lint"]

    with SandboxedHelm(LIMITS, workers=1) as cold:
        first = lint_findings(cold)
    with SandboxedHelm(LIMITS, workers=1) as warm:
        second = lint_findings(warm)
        assert warm.pids() == []  # no render process was ever started: nothing rendered or linted
    assert first == second == [("failure", "burst, equal", "app/templates/d.yaml")]


def test_which_renderers_lint_is_what_the_protocol_says() -> None:
    class Plain:
        version = "x"

    for renderer in (EmbeddedHelm(), Plain(), Plain()):
        assert can_lint(renderer) == isinstance(renderer, LintingRenderer)
    assert can_lint(EmbeddedHelm()) and not can_lint(Plain())


def test_a_lint_alone_says_what_a_render_and_its_lint_say_without_the_render(
    sandbox: SandboxedHelm,
) -> None:
    files = {"templates/cm.yaml": CONFIG_MAP, "templates/d.yaml": NO_SELECTOR}
    both = sandbox.render_linted(archive(files), {"name": "Bad_Name"}, "release", "default")
    alone = sandbox.lint_alone(archive(files), {"name": "Bad_Name"}, "release", "default")
    assert (alone.manifests, alone.error) == (None, None)
    assert alone.lint == both.lint and above_info(alone.lint)


def test_a_side_is_unpacked_once_for_all_its_lints_which_say_what_helm_says_of_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Helm's lint of an archive unpacks it again at every profile; the lint of the directory it
    is unpacked into once says the same, chart-level messages and template errors alike."""
    import tempfile

    import helm_python

    from bot.render.lint import lint_archive

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = {"templates/cm.yaml": CONFIG_MAP, "templates/e.yaml": "x: {{ .Values.a.b }}\n"}
    helm = EmbeddedHelm()
    linted = [helm.lint(archive(files), {"name": n}, "default") for n in ("ok", "Bad_Name")]
    (kept,) = os.listdir(tmp_path)  # one private directory, holding the chart unpacked once
    assert os.listdir(tmp_path / kept) == ["helm-lint1"]
    for entries, name in zip(linted, ("ok", "Bad_Name"), strict=True):
        assert entries == lint_archive(helm_python, archive(files), {"name": name}, "default", None)
        assert any(e.severity == LintSeverity.ERROR and "e.yaml" in e.message for e in entries)


def test_lints_side_by_side_in_one_process_never_lose_the_directory_they_read() -> None:
    """In-process (the demo, the tests) lints of many charts run at once: a directory one of them
    reads is kept until it is done, however many others are unpacked meanwhile."""
    from concurrent.futures import ThreadPoolExecutor

    helm = EmbeddedHelm()
    charts = [
        archive({"templates/cm.yaml": CONFIG_MAP, f"templates/n{n}.yaml": ""}) for n in range(8)
    ]
    alone = [helm.lint(a, {"name": "ok"}, "default") for a in charts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda a: helm.lint(a, {"name": "ok"}, "default"), charts * 4))
    assert together == alone * 4
    assert not any("missing" in e.message for entries in together for e in entries)
