"""Never a silent pass: a chart nothing could be checked on at head is said first, as a warning,
and no check run or summary reads as a pass for it."""

from __future__ import annotations

from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.config import PER_CHECK
from bot.model.report import Report, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.report.bodies import NEUTRAL
from bot.report.markdown import to_markdown
from bot.report.run_layout import check_run_outputs, summary_comment
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

LIBRARY = "apiVersion: v2\nname: common\nversion: 1.0.0\ntype: library\n"
HELPER = '{{- define "common.name" -}}{{ .Chart.Name }}{{- end -}}\n'
CHART_WITH_DEPENDENCY = (
    "apiVersion: v2\nname: app\nversion: 1.0.0\n"
    "dependencies:\n  - name: redis-ha\n    version: 4.38.0\n"
    "    repository: https://charts.example.test\n"
)
USER = (
    "apiVersion: v2\nname: web\nversion: 1.0.0\n"
    "dependencies:\n  - name: common\n    version: 1.0.0\n    repository: file://../common\n"
)


def review(g: GitBuilder) -> Report:
    """Offline: charts.example.test is not asked (tests reach only loopback)."""
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr", offline=True)).report


def test_a_library_chart_is_not_reviewed_and_names_who_depends_on_it(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("charts/common/Chart.yaml", LIBRARY).write("charts/common/templates/_n.tpl", HELPER)
    g.write("charts/web/Chart.yaml", USER).write("charts/web/values.yaml", "{}\n").commit("init")
    g.branch("pr").write("charts/common/templates/_n.tpl", HELPER.replace("Name", "Version"))
    g.write("charts/common/Chart.yaml", LIBRARY.replace("1.0.0", "1.0.1")).commit("helper")
    report = review(g)
    # The library is said to be unreviewable; the chart that renders it is reviewed in its place.
    chart, dependent = report.charts
    assert (chart.path, dependent.path, dependent.not_reviewed) == (
        "charts/common",
        "charts/web",
        None,
    )
    assert chart.not_reviewed == (
        "it is a library chart, which renders nothing itself; "
        "the charts that depend on it here: charts/web"
    )
    (finding,) = [f for f in report.findings if f.rule == "not-reviewed"]
    assert (finding.severity, finding.title) == (
        "warning",
        "charts/common: not reviewed: it is a library chart, which renders nothing itself",
    )
    assert report.to_json()["charts"][0]["not_reviewed"] == chart.not_reviewed
    markdown = to_markdown(report, REGISTRY.sections())
    # charts/web has no templates/ at either side: helm lint's warning, folded as pre-existing.
    assert markdown.startswith(
        "## ⚠️ chart-review: 1 warning; 1 already at base; not reviewed: charts/common\n"
    )
    assert "Not reviewed: it is a library chart" in markdown


def test_a_chart_failing_everywhere_alike_is_not_a_pass(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    files = chart_files()
    files["app/templates/broken.yaml"] = "x: {{ .Values.missing.key }}\n"
    for path, text in files.items():
        g.write(path, text)
    g.commit("broken already").branch("pr").write("app/values.yaml", "a: 1\n")
    g.write("app/Chart.yaml", chart_files(version="1.0.1")["app/Chart.yaml"]).commit("touch")
    report = review(g)
    assert not report.failed  # the failure is not the PR's doing...
    rules = sorted(f.rule for f in report.findings_for("render"))
    assert rules == ["fails-both", "not-reviewed"]  # ...but nothing was checked either
    [one] = check_run_outputs(report, REGISTRY.sections())
    assert (one.name, one.conclusion) == ("chart-review", NEUTRAL)
    assert one.title.endswith("; not reviewed: app")
    outputs = {o.name: o for o in check_run_outputs(report, REGISTRY.sections(), PER_CHECK)}
    assert outputs["chart-review/qos"].conclusion == NEUTRAL
    assert outputs["chart-review/qos"].title == "no findings; not reviewed: app"
    comment = summary_comment(report, REGISTRY.sections())
    assert "## ⚠️ chart-review:" in comment and "✅" not in comment


def test_a_new_profile_failing_as_the_base_failed_is_not_the_prs_doing(tmp_path: Path) -> None:
    """Found on a real repository: a PR adds a `ci/vpa-values.yaml` profile to a chart whose
    dependency is fetched at release, so every profile fails at base and head alike. The new
    profile fails exactly as the old ones did: a notice, not a failure."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/Chart.yaml", CHART_WITH_DEPENDENCY).commit("app with a dependency")
    g.branch("pr").write("app/ci/vpa-values.yaml", "{}\n").commit("vpa profile")
    report = review(g)
    render = {(f.rule, f.profile): f for f in report.findings if f.check == "render"}
    assert render[("fails-both", "vpa")].severity is Severity.NOTICE
    assert "as profile burst already did at base" in render[("fails-both", "vpa")].message
    assert not report.failed


def test_a_dependency_the_pr_adds_is_no_render_failure(tmp_path: Path) -> None:
    """A PR that adds a dependency from a chart repository cannot be rendered without fetching it:
    the chart is not reviewed (a warning on each profile, and the chart named so), never a
    'fails to render' failure the PR's templates did not cause."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("pr").write("app/Chart.yaml", CHART_WITH_DEPENDENCY).commit("add redis-ha")
    report = review(g)
    assert not report.failed
    render = sorted((f.rule, f.subject, f.severity) for f in report.findings if f.check == "render")
    assert render == [
        ("dependency-unavailable", "burst, equal", Severity.WARNING),  # one finding, both profiles
        ("not-reviewed", None, Severity.WARNING),
    ]
    assert report.charts[0].not_reviewed is not None


def test_another_missing_dependency_at_head_is_still_not_the_prs_doing(tmp_path: Path) -> None:
    """At base one dependency is missing, at head two (the PR adds one): the messages differ, but
    both sides lack what the review never fetches, so it is folded as already so at base."""
    two = CHART_WITH_DEPENDENCY + "  - name: redis\n    version: 18.1.2\n"
    two += "    repository: https://charts.example.test\n"
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/Chart.yaml", CHART_WITH_DEPENDENCY).commit("app with a dependency")
    g.branch("pr").write("app/Chart.yaml", two).commit("and redis")
    report = review(g)
    render = [f for f in report.findings if f.check == "render" and f.rule != "not-reviewed"]
    assert {f.rule for f in render} == {"fails-both"}
    assert all(f.severity is Severity.NOTICE and f.preexisting for f in render)


REQUIRES_CLUSTER = (
    '{{ required "Chart cannot be installed without a valid clusterName!" .Values.clusterName }}\n'  # noqa: E501
)


def test_a_chart_whose_ci_values_are_no_profile_is_told_how_to_make_them_one(
    tmp_path: Path,
) -> None:
    """Found on aws/eks-charts: a chart that needs `clusterName` keeps it for CI in `ci/values.yaml`
    (and `ci/extra_args`), which chart-testing's rule does not take as a profile; its defaults fail.
    The warning says which files were passed over and how to make one a profile."""
    g = GitBuilder(tmp_path / "repo")
    g.write("lbc/Chart.yaml", "apiVersion: v2\nname: lbc\nversion: 1.0.0\n")
    g.write("lbc/values.yaml", "clusterName: ''\n")
    g.write("lbc/templates/cm.yaml", "kind: ConfigMap\ndata:\n  c: " + REQUIRES_CLUSTER)
    g.write("lbc/ci/values.yaml", "clusterName: ci\n")
    g.write("lbc/ci/extra_args", "--set clusterName=k8s-ci-cluster\n").commit("lbc")
    g.branch("pr").write("lbc/values.yaml", "clusterName: ''\nregion: x\n")
    g.write("lbc/Chart.yaml", "apiVersion: v2\nname: lbc\nversion: 1.0.1\n").commit("region")
    (finding,) = [f for f in review(g).findings if f.rule == "not-reviewed"]
    assert finding.title == "lbc: not reviewed: it renders on no profile at head"
    assert "without a valid clusterName!); its ci/ holds `values.yaml`, which chart-testing" in (
        finding.message
    )
    assert "only `ci/*-values.yaml` files are profiles" in finding.message
    assert "extra_args" not in finding.message  # not a values file

    # With the file renamed as chart-testing wants it, the chart is reviewed.
    g.run_git("mv", "lbc/ci/values.yaml", "lbc/ci/default-values.yaml")
    g.commit("a profile")
    assert [f for f in review(g).findings if f.rule == "not-reviewed"] == []


def test_a_chart_with_nothing_in_ci_gets_no_hint(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("lbc/Chart.yaml", "apiVersion: v2\nname: lbc\nversion: 1.0.0\n")
    g.write("lbc/templates/cm.yaml", "kind: ConfigMap\ndata:\n  c: " + REQUIRES_CLUSTER)
    g.commit("lbc").branch("pr").write("lbc/values.yaml", "region: x\n").commit("region")
    (finding,) = [f for f in review(g).findings if f.rule == "not-reviewed"]
    assert finding.message.endswith(
        "without a valid clusterName!). No other check could look at it, so their silence says "
        "nothing about this chart."
    )
