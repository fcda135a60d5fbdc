"""Untrusted charts: renders in the sandbox's processes under limits, and the findings hostile or
broken charts give, through the engine on real git repositories."""

from __future__ import annotations

import fcntl
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app.settings import SettingsError, render_limits
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.check import Registry
from bot.model.report import Finding, Report
from bot.render.base import RenderFailure
from bot.render.cache import RenderCache
from bot.render.child import manifests_reply, read_reply
from bot.render.factory import make_renderer
from bot.render.sandbox import SandboxedHelm, SandboxLimits
from checks import REGISTRY, render
from tests.support.app_harness import wait_for
from tests.support.charts import CHART_YAML, chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.paths import ROOT

# Small limits keep the hostile cases fast; one process shows that a killed one is replaced.
LIMITS = SandboxLimits(wall_seconds=10.0, cpu_seconds=1, memory_bytes=256 * 2**20)
LOOP = "{{- range $i := until 100000 }}{{ range $j := until 100000 }}{{ end }}{{ end }}\n"
GIGABYTE = 'a: {{ repeat 1000000000 "x" | len }}\n'


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxedHelm]:
    with SandboxedHelm(LIMITS, workers=1) as helm:
        yield helm


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    return g.commit("app 1.0.0")


def review(g: GitBuilder, renderer: Any, cache: RenderCache | None = None) -> Report:
    engine = Engine(GitRepo(g.path), renderer, REGISTRY, cache or RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr", profiles=("equal",))).report


def render_findings(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.check == "render"]


def only_render_finding(report: Report) -> Finding:
    """The render failure; a chart failing on every profile is also said as not reviewed."""
    (finding,) = [f for f in render_findings(report) if f.rule != "not-reviewed"]
    return finding


# -- limits --------------------------------------------------------------------------------------


def test_template_that_loops_for_ever_fails_on_cpu_and_the_next_render_works(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    repo.branch("pr").write("app/templates/loop.yaml", LOOP).commit("loop")
    before = sandbox.pids()
    finding = only_render_finding(review(repo, sandbox))
    assert (finding.severity, finding.rule, finding.profile) == ("failure", "head-fails", "equal")
    assert finding.title == "app fails to render on profile equal"
    assert finding.message == (
        "profile equal: the head fails to render where the base rendered: the chart: "
        "render exceeded its time limit (1 s of CPU time)"
    )
    assert not set(before) & set(sandbox.pids())  # the looping process was replaced
    repo.checkout("develop").branch("fine").write("app/values.yaml", "resources: {}\n").commit("ok")
    engine = Engine(GitRepo(repo.path), sandbox, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="fine", profiles=("equal",))).report
    assert render_findings(report) == []


def test_gigabyte_string_fails_on_memory(repo: GitBuilder, sandbox: SandboxedHelm) -> None:
    repo.branch("pr").write("app/templates/big.yaml", GIGABYTE).commit("big")
    finding = only_render_finding(review(repo, sandbox))
    assert finding.severity == "failure"
    assert finding.message.endswith("render exceeded its memory limit (256 MiB)")


def test_endless_tpl_recursion_fails_on_memory_instead_of_killing_the_bot(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    # In-process, this overflows the Go stack: a fatal error that ends the whole worker.
    repo.branch("pr").write("app/values.yaml", "s: '{{ tpl .Values.s . }}'\n")
    repo.write("app/templates/rec.yaml", "a: {{ tpl .Values.s . }}\n").commit("rec")
    finding = only_render_finding(review(repo, sandbox))
    assert finding.message.endswith("render exceeded its memory limit (256 MiB)")


def test_loop_on_both_sides_is_a_notice_naming_both(tmp_path: Path, sandbox: SandboxedHelm) -> None:
    g = GitBuilder(tmp_path / "r")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/templates/loop.yaml", LOOP).commit("init")
    g.branch("pr").write("app/values.yaml", "resources: {}\n").commit("change")
    finding = only_render_finding(review(g, sandbox))
    assert (finding.severity, finding.rule) == ("notice", "fails-both")
    assert "render exceeded its time limit (1 s of CPU time)" in finding.message


def test_wall_clock_limit_stops_a_render_and_is_not_cached(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/templates/loop.yaml", LOOP).commit("loop")
    limits = SandboxLimits(wall_seconds=1.0, cpu_seconds=60, memory_bytes=256 * 2**20)
    cache = RenderCache()
    with SandboxedHelm(limits, workers=1) as helm:
        first = only_render_finding(review(repo, helm, cache))
        started = time.monotonic()
        second = only_render_finding(review(repo, helm, cache))
        rendered_again = time.monotonic() - started >= 1.0
    assert first.message.endswith("render exceeded its time limit (1 s of wall-clock time)")
    assert second.message == first.message and rendered_again


class Scripted:
    """A renderer that fails as told, counting its renders."""

    version = "scripted"

    def __init__(self, failure: RenderFailure) -> None:
        self.failure, self.calls = failure, 0

    def render(self, archive: bytes, values: Mapping[str, Any], release: str, ns: str) -> Any:
        self.calls += 1
        raise self.failure


@pytest.mark.parametrize(("transient", "renders"), [(False, 1), (True, 2)])
def test_only_failures_that_would_recur_are_cached(
    repo: GitBuilder, transient: bool, renders: int
) -> None:
    repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    renderer, cache = Scripted(RenderFailure("limit", transient=transient)), RenderCache()
    review(repo, renderer, cache)
    review(repo, renderer, cache)
    assert renderer.calls == 2 * renders  # base and head, each once or each time


# -- broken charts --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('a: 1\nb: {{ fail "no ingress class" }}\n', 2, "no ingress class"),
        ('a: 1\n\nb: {{ required "set image.tag" .Values.image }}\n', 3, "set image.tag"),
    ],
)
def test_fail_and_required_name_the_template_and_line(
    repo: GitBuilder, sandbox: SandboxedHelm, text: str, line: int, message: str
) -> None:
    repo.branch("pr").write("app/templates/guard.yaml", text).commit("guard")
    finding = only_render_finding(review(repo, sandbox))
    assert (finding.path, finding.line, finding.severity) == (
        "app/templates/guard.yaml",
        line,
        "failure",
    )
    assert finding.message.endswith(
        f"app/templates/guard.yaml line {line}: "
        + (f"execution error at (app/templates/guard.yaml:{line}:6): {message}")
    )


def test_chart_yaml_that_is_not_yaml_names_file_and_line(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    repo.branch("pr").write("app/Chart.yaml", "apiVersion: v2\nname: [app\n").commit("broken")
    finding = only_render_finding(review(repo, sandbox))
    assert (finding.path, finding.line, finding.severity) == ("app/Chart.yaml", 2, "failure")
    assert "app/Chart.yaml line 2: cannot load Chart.yaml: error converting YAML" in finding.message


def test_chart_values_that_are_a_list_name_the_file(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    repo.branch("pr").write("app/values.yaml", "- a\n- b\n").commit("list")
    finding = only_render_finding(review(repo, sandbox))
    assert (finding.path, finding.severity) == ("app/values.yaml", "failure")
    assert "cannot load values.yaml" in finding.message


def test_missing_subchart_names_chart_yaml_and_the_line(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    chart = CHART_YAML.format(name="app", version="1.0.1")
    deps = "dependencies:\n  - name: redis\n    version: 17.0.0\n    repository: https://x.test\n"
    repo.branch("pr").write("app/Chart.yaml", chart + deps).commit("redis")
    finding = only_render_finding(review(repo, sandbox))
    # Not the PR's templates' fault, but nothing could be looked at: a warning, never a pass.
    assert (finding.path, finding.line, finding.severity) == ("app/Chart.yaml", 6, "warning")
    assert finding.rule == "dependency-unavailable"
    # Named only at head, so not fetched: the allow-list is the base's.
    assert "dependency redis 17.0.0 from https://x.test could not be fetched: " in finding.message
    assert "https://x.test is not among the repositories the base's Chart.yaml" in finding.message


def test_fifty_megabyte_values_files_are_refused_by_name(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    big = "padding: |\n" + "  " + "x" * 50 * 2**20 + "\n"  # 50 MiB
    repo.branch("pr").write("app/ci/equal-values.yaml", big).commit("big ci values")
    finding = only_render_finding(review(repo, sandbox))
    assert (finding.path, finding.severity) == ("app/ci/equal-values.yaml", "failure")
    assert (
        "values file app/ci/equal-values.yaml is 50.0 MiB; a values file may be at most 5 MiB"
        in (finding.message)
    )
    repo.checkout("develop").branch("big").write("app/values.yaml", big).commit("big values")
    engine = Engine(GitRepo(repo.path), sandbox, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="big", profiles=("equal",))).report
    finding = only_render_finding(report)
    assert (finding.path, finding.severity) == ("app/values.yaml", "failure")
    assert "is larger than the maximum file size 5242880" in finding.message


def test_five_thousand_templates_render_within_the_default_limits(repo: GitBuilder) -> None:
    # The render check alone: the limits are the renders', and the other checks reading 5,000
    # objects (and helm lint of them) would cost this test three times its renders.
    only_render = Registry((render.CHECK,))
    repo.branch("pr")
    for i in range(5000):
        repo.write(
            f"app/templates/cm{i}.yaml",
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}}}\ndata: {{i: '{i}'}}\n",
        )
    repo.commit("5000 templates")
    with SandboxedHelm(SandboxLimits(), workers=1) as helm:
        engine = Engine(GitRepo(repo.path), helm, only_render, RenderCache())
        result = engine.review(ReviewInput(base="develop", head="pr", profiles=("equal",)))
    assert render_findings(result.report) == []
    assert len(result.context.charts[0].head["equal"].documents) == 5001


def test_dates_in_a_values_file_reach_helm_as_text(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    # YAML loads `2024-01-01` as a date, which JSON cannot carry: this used to be a traceback.
    template = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: when}\ndata: {at: {{ .Values.at | quote }}}\n"
    repo.branch("pr").write("app/ci/equal-values.yaml", "at: 2024-01-01\n")
    repo.write("app/templates/when.yaml", template).commit("dated")
    engine = Engine(GitRepo(repo.path), sandbox, REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", profiles=("equal",)))
    (when,) = [d for d in result.context.charts[0].head["equal"].documents if d.name == "when"]
    assert when.body["data"] == {"at": "2024-01-01"}


# -- what a template can reach ----------------------------------------------------------------------


def test_files_see_only_the_charts_own_files(repo: GitBuilder, sandbox: SandboxedHelm) -> None:
    template = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: peek}\ndata:\n"
        '  passwd: {{ .Files.Get "/etc/passwd" | quote }}\n'
        '  up: {{ .Files.Get "../../../etc/hostname" | quote }}\n'
        '  all: "{{ range $path, $_ := .Files.Glob "**" }}{{ $path }},{{ end }}"\n'
        '  host: {{ getHostByName "localhost" | quote }}\n'
    )
    repo.branch("pr").write("app/files/a.txt", "A\n").write("app/templates/peek.yaml", template)
    repo.commit("peek")
    engine = Engine(GitRepo(repo.path), sandbox, REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", profiles=("equal",)))
    rendered = result.context.charts[0].head["equal"]
    assert rendered.error is None, rendered.error
    (peek,) = [d for d in rendered.documents if d.name == "peek"]
    assert peek.body["data"] == {
        "passwd": "",
        "up": "",
        "all": "ci/burst-values.yaml,ci/equal-values.yaml,files/a.txt,",
        "host": "",
    }


def test_render_processes_hold_no_secrets(
    monkeypatch: pytest.MonkeyPatch, repo: GitBuilder
) -> None:
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", "-----BEGIN KEY-----")
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "hush")
    with SandboxedHelm(LIMITS, workers=1) as helm:
        repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
        review(repo, helm)
        (pid,) = helm.pids()
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"GITHUB_" not in environ
    # The pool is the parallelism: each process's Go runtime keeps to one core.
    assert b"GOMAXPROCS=1\0" in environ


# -- process lifetime -------------------------------------------------------------------------------

ORPHAN = """
import io, os, signal, sys, tarfile
sys.path.insert(0, {root!r})
from bot.render.sandbox import SandboxedHelm
data = b"apiVersion: v2\\nname: x\\nversion: 1.0.0\\n"
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as tar:
    info = tarfile.TarInfo("chart/Chart.yaml"); info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
helm = SandboxedHelm(workers=2)
helm.render(buf.getvalue(), {{}}, "r", "default")
print(*helm.pids(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_render_processes_die_with_the_bot() -> None:
    root = str(ROOT)
    script = ORPHAN.format(root=root)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    pids = [int(p) for p in proc.stdout.split()]
    assert pids and proc.returncode == -9
    wait_for(lambda: not any(alive(p) for p in pids), timeout=10, what="the orphans to die")


def test_a_process_killed_while_idle_is_replaced_quietly(
    repo: GitBuilder, sandbox: SandboxedHelm
) -> None:
    repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    review(repo, sandbox)
    (pid,) = sandbox.pids()
    os.kill(pid, 9)
    wait_for(lambda: not alive(pid), timeout=10, what=f"render process {pid} to die")
    assert render_findings(review(repo, sandbox)) == []
    assert sandbox.pids() != [pid]


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def chart_archive(template: str) -> bytes:
    buffer = io.BytesIO()
    files = {
        "chart/Chart.yaml": CHART_YAML.format(name="x", version="1.0.0"),
        "chart/templates/t.yaml": template,
    }
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return buffer.getvalue()


def test_a_process_killed_from_outside_mid_render_is_named_killed_not_out_of_memory() -> None:
    # Generous limits: only the kill below can end this render.
    limits = SandboxLimits(wall_seconds=60.0, cpu_seconds=60, memory_bytes=256 * 2**20)
    failures: list[RenderFailure] = []
    with SandboxedHelm(limits, workers=1) as helm:
        helm.render(chart_archive("a: 1\n"), {}, "r", "default")  # the process is up and idle
        (pid,) = helm.pids()
        idle = cpu_ticks(pid)

        def render_the_loop() -> None:
            try:
                helm.render(chart_archive(LOOP), {}, "r", "default")
            except RenderFailure as failure:
                failures.append(failure)

        rendering = threading.Thread(target=render_the_loop)
        rendering.start()
        wait_for(lambda: cpu_ticks(pid) > idle + 10, timeout=30, what="the loop to be rendering")
        os.kill(pid, signal.SIGKILL)
        rendering.join(30)
        assert not rendering.is_alive()
        (failure,) = failures
        assert failure.message == "the render process was killed (signal 9)"
        assert failure.transient  # not the chart's doing: not cached, tried again next time
        assert helm.render(chart_archive("a: 1\n"), {}, "r", "default")  # replaced
        assert helm.pids() != [pid]


@settings(max_examples=300, deadline=None, database=None)
@given(st.dictionaries(st.text(), st.text()))
def test_manifests_cross_the_pipe_as_they_were(manifests: dict[str, str]) -> None:
    # Texts in UTF-8 after their sizes: line feeds, non-ASCII, lone surrogates, empty texts, and
    # names holding line feeds (the JSON before the texts escapes them) come back the same.
    assert read_reply(manifests_reply(manifests)) == {"manifests": manifests}
    odd = {"x/t.yaml": "a: \udc80 é\n", "": ""}
    assert read_reply(manifests_reply(odd)) == {"manifests": odd}
    error = {"error": {"message": "a\nb", "template": None, "line": 3}}
    assert read_reply(json.dumps(error).encode()) == error


def test_the_pipes_to_a_render_process_hold_a_megabyte() -> None:
    # A reply of megabytes (a chart of CRDs) crosses in a few writes, not one per 64 KB.
    if int(Path("/proc/sys/fs/pipe-max-size").read_text()) < 2**20:
        pytest.skip("this machine allows no pipe of a megabyte")
    template = 'a: {{ repeat 3000000 "x" | quote }}\n'
    with SandboxedHelm(LIMITS, workers=1) as helm:
        manifests = helm.render(chart_archive(template), {}, "r", "default")
        (pid,) = helm.pids()
        theirs = {_link(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        theirs = {link for link in theirs if link.startswith("pipe:")}
        ours = [
            int(fd) for fd in os.listdir("/proc/self/fd") if _link(f"/proc/self/fd/{fd}") in theirs
        ]
        sizes = [fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) for fd in ours]
    assert manifests == {"x/templates/t.yaml": f'a: "{"x" * 3_000_000}"\n'}
    assert sizes == [2**20, 2**20]  # the request pipe and the reply pipe


def _link(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""  # a descriptor closed since the listing (the listing's own, say)


def test_a_process_whose_pipes_are_numbered_past_1023_renders() -> None:
    # select() refuses such descriptors; a bot process with many repositories open reaches them.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this machine allows only {hard} open files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    filler = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with SandboxedHelm(LIMITS, workers=1) as helm:
            manifests = helm.render(chart_archive("a: 1\n"), {}, "r", "default")
            (pid,) = helm.pids()
            pipes = [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 1023]
        assert manifests == {"x/templates/t.yaml": "a: 1\n"} and pid and pipes
    finally:
        for fd in filler:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_started_processes_load_before_the_first_render_and_serve_it() -> None:
    with SandboxedHelm(LIMITS, workers=2) as helm:
        helm.start()
        pids = helm.pids()
        assert len(pids) == 2 and all(alive(p) for p in pids)  # before any render was asked
        helm.start()  # the pool is full: nothing more is started
        assert helm.pids() == pids
        rendered = helm.render(chart_archive("a: 1\n"), {}, "r", "default")
        assert rendered == {"x/templates/t.yaml": "a: 1\n"}
        assert helm.pids() == pids  # one of them rendered it
    assert not any(alive(p) for p in pids)


def test_close_ends_the_processes(repo: GitBuilder) -> None:
    helm = SandboxedHelm(LIMITS, workers=1)
    repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    review(repo, helm)
    pids = helm.pids()
    helm.close()
    assert pids and not any(alive(p) for p in pids)
    with pytest.raises(RenderFailure, match="shut down"):
        helm.render(b"", {}, "r", "default")


# -- configuration ---------------------------------------------------------------------------------


def test_limits_from_the_environment() -> None:
    env = {"RENDER_TIMEOUT": "5", "RENDER_CPU_SECONDS": "3", "RENDER_MEMORY_MB": "512"}
    assert render_limits(env) == SandboxLimits(5.0, 3, 512 * 2**20)
    assert render_limits({}) == SandboxLimits()
    with pytest.raises(SettingsError, match="RENDER_CPU_SECONDS must be positive, got 0"):
        render_limits({"RENDER_CPU_SECONDS": "0"})


def test_the_embedded_renderer_is_the_sandbox() -> None:
    renderer = make_renderer("embedded", LIMITS)
    assert isinstance(renderer, SandboxedHelm) and renderer.limits == LIMITS
    assert "sandbox cpu=1s" in renderer.version
    assert os.getpid() not in renderer.pids()
