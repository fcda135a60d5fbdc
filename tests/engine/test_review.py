"""The engine on real git repositories and real Helm renders."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bot.charts.selection import ChartError
from bot.engine.review import Engine, ReviewError, ReviewInput
from bot.git.repo import GitRepo
from bot.model.check import Check, Registry
from bot.model.config import ConfigError
from bot.model.context import ChartContext, Context
from bot.model.report import Finding, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.report.markdown import to_markdown
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder


class CountingRenderer:
    """The real embedded renderer, counting how often Helm actually runs."""

    def __init__(self) -> None:
        self.inner = EmbeddedHelm()
        self.version = self.inner.version
        self.calls = 0

    def render(self, chart_dir, values, release, namespace):  # type: ignore[no-untyped-def]
        self.calls += 1
        return self.inner.render(chart_dir, values, release, namespace)


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    return g


def engine_for(g: GitBuilder, renderer: CountingRenderer | None = None) -> Engine:
    return Engine(GitRepo(g.path), renderer or CountingRenderer(), REGISTRY, RenderCache())


def review(g: GitBuilder, head: str = "pr", **kw: object) -> tuple:  # type: ignore[type-arg]
    engine = engine_for(g)
    result = engine.review(ReviewInput(base="develop", head=head, **kw))  # type: ignore[arg-type]
    return result.report, result.context


def test_both_sides_rendered_for_every_profile(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.1\n").commit(
        "bump"
    )
    report, ctx = review(repo)
    (chart,) = ctx.charts
    assert set(chart.base) == set(chart.head) == {"burst", "equal"}
    docs = chart.head["equal"].documents
    assert [d.key for d in docs] == ["Deployment/default/release-app"]
    assert docs[0].template == "app/templates/deployment.yaml"
    (summary,) = report.charts
    assert (summary.version_base, summary.version_head) == ("1.0.0", "1.0.1")
    assert summary.profiles == ("burst", "equal")


def test_defaults_rendered_only_without_ci_profiles(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    files = {k: v for k, v in chart_files().items() if "/ci/" not in k}
    for path, text in files.items():
        g.write(path, text)
    g.commit("init").branch("pr").write("app/values.yaml", "resources: {}\n").commit("no resources")
    _, ctx = review(g)
    assert set(ctx.charts[0].head) == {"default"}


def test_profile_added_on_one_side(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/ci/gke-values.yaml", "{}\n").commit("gke profile")
    report, ctx = review(repo)
    chart = ctx.charts[0]
    assert "gke" in chart.head and "gke" not in chart.base
    assert report.charts[0].profiles == ("burst", "equal", "gke")


def test_template_error_at_head_is_a_failure_naming_template_and_line(repo: GitBuilder) -> None:
    repo.branch("pr").write(
        "app/templates/broken.yaml", "a: 1\nb: {{ .Values.nope.deeper }}\n"
    ).commit("x")
    report, _ = review(repo)
    (finding,) = [f for f in report.findings if f.check == "render" and f.rule != "not-reviewed"]
    assert report.charts[0].not_reviewed is not None  # and it is said: nothing else was checked
    assert finding.severity == "failure"
    assert finding.rule == "head-fails"
    assert (finding.path, finding.line) == ("app/templates/broken.yaml", 2)
    assert finding.data["profiles"] == ["burst", "equal"]
    assert finding.title == "app fails to render on profiles burst, equal"
    errors = report.charts[0].render_errors
    assert {(e.side, e.template, e.line) for e in errors} == {
        ("head", "app/templates/broken.yaml", 2)
    }
    assert report.failed


def test_error_at_base_and_head_alike_is_a_notice(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/templates/broken.yaml", 'b: {{ required "set x" .Values.x }}\n').commit("init")
    g.branch("pr").write("app/values.yaml", "resources: {}\n")
    g.write("app/Chart.yaml", chart_files(version="1.0.1")["app/Chart.yaml"]).commit("change")
    report, _ = review(g)
    render = [f for f in report.findings if f.check == "render"]
    assert {(f.rule, f.severity) for f in render} == {
        ("fails-both", "notice"),  # not this PR's doing
        ("not-reviewed", "warning"),  # but nothing could be checked on it either
    }
    assert not report.failed


def test_head_that_fixes_a_base_failure_says_so(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/templates/broken.yaml", 'b: {{ required "set x" .Values.x }}\n').commit("init")
    g.branch("pr").remove("app/templates/broken.yaml").commit("fix")
    report, _ = review(g)
    rules = {(f.rule, f.severity) for f in report.findings if f.check == "render"}
    assert rules == {("fixed", "notice")}


def test_symlink_to_a_file_outside_the_chart_is_refused(repo: GitBuilder, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("MARKER-7f3a9\n")
    repo.branch("pr").symlink("app/files/leak.txt", str(secret))
    repo.write(
        "app/templates/leak.yaml", 'data: {{ .Files.Get "files/leak.txt" | quote }}\n'
    ).commit("leak")
    report, ctx = review(repo)
    (finding,) = [f for f in report.findings if f.rule == "unsafe-tree"]
    assert finding.severity == "failure"
    assert "app/files/leak.txt: is a symbolic link; refused, not followed" in finding.message
    assert "MARKER-7f3a9" not in report.to_json_text()
    assert all(r.error is not None for r in ctx.charts[0].head.values())


def test_a_symlink_the_chart_s_helmignore_excludes_is_never_read_and_never_refused(
    repo: GitBuilder, tmp_path: Path
) -> None:
    """Found on a public repository (issue 38): a chart keeps a symbolic link for its developers
    that its `.helmignore` names; Helm never reads it and `ct lint` lints the chart. It was refused
    as an unsafe tree, and so not reviewed."""
    secret = tmp_path / "secret.txt"
    secret.write_text("MARKER-7f3a9\n")
    repo.branch("pr").symlink("app/dev/link.txt", str(secret))
    repo.write("app/.helmignore", "# for developers only\ndev/\n")
    repo.write("app/values.yaml", "resources: {}\n").commit("a link for developers")
    report, ctx = review(repo)
    assert [f for f in report.findings if f.rule in ("unsafe-tree", "not-reviewed")] == []
    assert all(r.error is None for r in ctx.charts[0].head.values())
    assert "MARKER-7f3a9" not in report.to_json_text()
    # Not excluded, the same link is refused as before.
    repo.checkout("pr").write("app/.helmignore", "# nothing\n").commit("include it")
    report, _ = review(repo)
    assert [f.rule for f in report.findings if f.rule == "unsafe-tree"] == ["unsafe-tree"]


def test_values_file_that_is_a_list_names_the_file(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/ci/equal-values.yaml", "- a\n- b\n").commit("oops")
    report, _ = review(repo)
    (finding,) = [f for f in report.findings if f.check == "render"]
    assert finding.profile == "equal"
    assert (
        "values file app/ci/equal-values.yaml line 1: expected a mapping, found a list"
        in finding.message
    )


def test_only_charts_the_diff_touches_unless_asked(repo: GitBuilder) -> None:
    for path, text in chart_files("other", "other").items():
        repo.write(path, text)
    repo.commit("second chart").branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    report, _ = review(repo)
    assert [c.path for c in report.charts] == ["app"]
    report, _ = review(repo, all_charts=True)
    assert [c.path for c in report.charts] == ["app", "other"]
    report, _ = review(repo, charts=("other",))
    assert [c.path for c in report.charts] == ["other"]
    with pytest.raises(ChartError, match="--chart nope: no Chart.yaml"):
        review(repo, charts=("nope",))


def test_charts_under_a_hidden_directory_are_fixtures_unless_asked(repo: GitBuilder) -> None:
    """Found on traefik/traefik-helm-chart: Chart.yaml-only fixtures of a workflow's test under
    `.github/fixtures/…/charts/traefik` were reviewed as charts, and lint said 'templates/: directory
    does not exist' for each. Neither chart-testing nor a release takes them for charts."""
    fixture = ".github/fixtures/major/charts/traefik"
    repo.branch("pr").write(f"{fixture}/Chart.yaml", "apiVersion: v2\nname: traefik\nversion: 2\n")
    repo.write("app/values.yaml", "resources: {}\n").commit("a fixture, and the chart")
    report, _ = review(repo)
    assert [c.path for c in report.charts] == ["app"]
    report, _ = review(repo, all_charts=True)
    assert [c.path for c in report.charts] == ["app"]
    report, _ = review(repo, charts=(fixture,))  # asked for by name: reviewed
    assert [c.path for c in report.charts] == [fixture]


def test_a_change_outside_any_chart_reviews_no_chart(repo: GitBuilder) -> None:
    repo.branch("pr").write("docs/notes.md", "# notes\n").commit("docs")
    report, _ = review(repo)
    assert report.charts == ()


def test_unchanged_side_is_rendered_once_across_reviews(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    repo.checkout("develop").branch("pr2").write("app/ci/burst-values.yaml", "x: 1\n").commit("y")
    counting = CountingRenderer()
    engine = engine_for(repo, counting)
    engine.review(ReviewInput(base="develop", head="pr"))
    # 2 profiles x 2 sides; then profile burst's downgrade, from values.yaml: the render marking
    # the values it changed (bot/engine/provenance.py) and the one proving the values fix.
    assert counting.calls == 4 + 2
    engine.review(ReviewInput(base="develop", head="pr"))
    assert counting.calls == 6  # everything cached
    engine.review(ReviewInput(base="develop", head="pr2"))
    assert (
        counting.calls == 8
    )  # base shared with pr; the head tree changed, so both its profiles render


def test_bare_repository_and_untouched_work_tree(repo: GitBuilder, tmp_path: Path) -> None:
    repo.branch("pr").write("app/values.yaml", "resources: {}\n").commit("x")
    repo.checkout("develop")
    before = (repo.path / "app/values.yaml").read_text()
    bare = tmp_path / "bare.git"
    repo.run_git("clone", "-q", "--bare", str(repo.path), str(bare))
    engine = Engine(GitRepo(bare), CountingRenderer(), REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr")).report
    assert [c.path for c in report.charts] == ["app"]
    assert (repo.path / "app/values.yaml").read_text() == before
    assert repo.run_git("status", "--porcelain") == ""


@pytest.mark.parametrize("synced", [False, True])
def test_the_review_measures_from_the_merge_base_and_reads_the_prs_commits(
    repo: GitBuilder, synced: bool
) -> None:
    # Synced: the PR merged develop in midway, so two commits bound it and git names the merge
    # base; else its one fork point does.
    repo.write("docs.md", "one\n").commit("develop 1")
    repo.branch("pr", "HEAD~1" if synced else None).write("app/NOTES.txt", "hi\n").commit("pr 1")
    if synced:
        repo.merge("develop", "sync develop")
    repo.write("app/NOTES.txt", "hi again\n").commit("pr 2")
    repo.checkout("develop").write("docs.md", "two\n").commit("develop 2")
    report, ctx = review(repo)
    assert report.base == GitRepo(repo.path).merge_base(repo.sha("develop"), repo.sha("pr"))
    assert report.base == repo.sha("develop~1")
    subjects = [c.subject for c in ctx.pr.commits]
    assert subjects == (["pr 2", "sync develop", "pr 1"] if synced else ["pr 2", "pr 1"])
    assert [c.path for c in ctx.changes] == ["app/NOTES.txt"]


def test_a_review_asked_for_no_rendered_diff_says_the_same_without_it(repo: GitBuilder) -> None:
    repo.branch("pr").write("app/ci/equal-values.yaml", "resources: {}\n").commit("no resources")
    with_diff, _ = review(repo)
    without, _ = review(repo, rendered_diff=False)
    assert with_diff.findings == without.findings and with_diff.findings
    assert with_diff.charts[0].extra["diff"]["profiles"]
    assert "diff" not in without.charts[0].extra
    assert without.charts[0].extra["capabilities"] == with_diff.charts[0].extra["capabilities"]


def test_unknown_ref_is_a_review_error(repo: GitBuilder) -> None:
    with pytest.raises(ReviewError, match="head 'nope' is not a commit"):
        review(repo, head="nope")


def test_bad_config_is_read_at_base_and_named(repo: GitBuilder) -> None:
    repo.write(".github/chart-review.yml", "release_name: r\nchecks:\n  qos:\n    enabled: true\n")
    repo.commit("config").branch("pr").write("app/values.yaml", "{}\n").commit("x")
    engine = engine_for(repo)
    result = engine.review(ReviewInput(base="develop", head="pr"))
    assert result.context.release_name == "r"
    repo.checkout("develop").write(
        ".github/chart-review.yml", "profiles:\n  - name: x\n    arbitary_uid: true\n"
    )
    repo.commit("typo")
    with pytest.raises(ConfigError, match=r"line 3: unknown key 'profiles.0.arbitary_uid'"):
        engine.review(ReviewInput(base="develop", head="pr"))


def test_config_at_head_cannot_switch_checks_off(repo: GitBuilder) -> None:
    repo.branch("pr").write(".github/chart-review.yml", "release_name: from-head\n")
    repo.write("app/values.yaml", "{}\n").commit("x")
    _, ctx = review(repo)
    assert ctx.release_name == "release"


def test_config_profiles_add_values_and_flags(repo: GitBuilder) -> None:
    repo.write(
        ".github/chart-review.yml",
        "profiles:\n  - name: inline\n    values: {resources: {}}\n  - name: equal\n    arbitrary_uid: true\n",
    )
    repo.commit("config").branch("pr").write("app/values.yaml", "{}\n").commit("x")
    _, ctx = review(repo)
    chart = ctx.charts[0]
    assert set(chart.head) == {"burst", "equal", "inline"}
    assert chart.profiles["equal"].arbitrary_uid is True
    assert chart.head["inline"].values == {"resources": {}}


def test_a_check_that_cannot_finish_is_a_warning_and_the_review_goes_on(
    repo: GitBuilder,
) -> None:
    # A crafted chart: a quantity nested ~985 lists deep. libyaml parses it (its limit is 1,000
    # levels), but walking it takes Python past its recursion limit.
    deep = "[" * 985 + "]" * 985
    template = chart_files()["app/templates/deployment.yaml"].replace(
        "{{- toYaml .Values.resources | nindent 12 }}", f"requests: {{cpu: {deep}}}"
    )
    repo.branch("pr").write("app/templates/deployment.yaml", template)
    repo.write("app/Chart.yaml", chart_files(version="1.0.1")["app/Chart.yaml"]).commit("deep")
    report, _ = review(repo)
    crashed = [f for f in report.findings if f.rule == "check-crashed"]
    assert crashed and {f.severity for f in crashed} == {Severity.WARNING}
    assert "qos" in {f.check for f in crashed}
    assert all(f.chart == "app" and "RecursionError" in f.message for f in crashed)
    assert set(report.checks_run) == set(REGISTRY.names)  # every other check still ran
    markdown = to_markdown(report, REGISTRY.sections())
    assert "The qos check stopped on chart app with RecursionError" in markdown
    assert "No pod changed QoS class" not in markdown
    assert json.loads(report.to_json_text())["findings"]


def test_the_engine_runs_the_registry_it_is_handed_and_no_other(repo: GitBuilder) -> None:
    seen: list[str] = []

    def one_per_chart(ctx: ChartContext) -> list[Finding]:
        seen.append(ctx.chart.path)  # a per-chart check's chart is always set
        return [Finding("only", Severity.WARNING, f"saw {ctx.chart.path}", "from the test")]

    only = Registry((Check("only", "Only", one_per_chart),))
    repo.branch("pr").write("app/NOTES.txt", "hi\n").commit("notes")
    engine = Engine(GitRepo(repo.path), CountingRenderer(), only, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr")).report
    assert seen == ["app"]
    assert report.checks_run == ("only",)
    assert [(f.check, f.title) for f in report.findings] == [("only", "saw app")]


class GatedRenderer(CountingRenderer):
    """Helm held back until `gate` opens (at most 30 s): what runs meanwhile ran before renders."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.opened_in_time: list[bool] = []

    def render(self, chart_dir, values, release, namespace):  # type: ignore[no-untyped-def]
        self.opened_in_time.append(self.gate.wait(timeout=30))
        return super().render(chart_dir, values, release, namespace)


def test_a_check_s_early_work_runs_while_the_renders_wait_and_before_its_run(
    repo: GitBuilder,
) -> None:
    renderer = GatedRenderer()
    order: list[str] = []

    def early(ctx: Context, chart: str) -> None:
        assert ctx.charts == () and ctx.head.is_file(f"{chart}/Chart.yaml")
        order.append(f"early {chart}")
        renderer.gate.set()

    def run(ctx: ChartContext) -> list[Finding]:
        order.append(f"run {ctx.chart.path}")
        return []

    registry = Registry((Check("gated", "Gated", run, early=early),))
    repo.branch("pr").write("app/NOTES.txt", "hi\n").commit("notes")
    Engine(GitRepo(repo.path), renderer, registry, RenderCache()).review(
        ReviewInput(base="develop", head="pr")
    )
    assert order == ["early app", "run app"]
    assert renderer.opened_in_time and all(renderer.opened_in_time)


def test_early_work_that_fails_leaves_the_run_to_do_it_and_say_so(repo: GitBuilder) -> None:
    def early(ctx: Context, chart: str) -> None:
        raise RecursionError("too deep for early")

    def run(ctx: ChartContext) -> list[Finding]:
        return [Finding("gated", Severity.WARNING, "ran", "the run itself")]

    registry = Registry((Check("gated", "Gated", run, early=early),))
    repo.branch("pr").write("app/NOTES.txt", "hi\n").commit("notes")
    report = (
        Engine(GitRepo(repo.path), CountingRenderer(), registry, RenderCache())
        .review(ReviewInput(base="develop", head="pr"))
        .report
    )
    assert [(f.check, f.title) for f in report.findings] == [("gated", "ran")]


def test_the_render_check_is_registered_so_the_config_can_name_it(
    repo: GitBuilder,
) -> None:
    repo.write(".github/chart-review.yml", "checks:\n  render:\n    enabled: false\n").commit("c")
    repo.branch("pr").write("app/templates/broken.yaml", "x: {{ .Values.a.b }}\n").commit("x")
    report, _ = review(repo)
    assert "render" not in report.checks_run
    assert not report.findings_for("render")
