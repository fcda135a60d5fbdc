"""The lint check (checks/lint.py): `helm lint` per profile as ct lint runs it, through the engine
on real git repositories and real Helm, said only for what the PR changed."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.context import LintSeverity
from bot.model.report import Finding, Report
from bot.render.base import RenderFailure
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.render.lint import Linted
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

CHART = "apiVersion: v2\nname: web\nversion: {version}\nicon: https://example.test/web.png\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  {{- if .Values.selector }}
  selector:
    matchLabels: {app: web}
  {{- end }}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example/web:1
"""
SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ .Values.serviceName }}
spec:
  ports: [{port: 80}]
"""
# Helm lints as release `test-release`, the review renders `release`: a branch taken only for test
# releases that includes a helper nobody defined fails under lint only, naming template and line.
TEST_RELEASE_ONLY = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-test
data:
  {{- if hasPrefix "test-" .Release.Name }}
  port: {{ include "web.testPort" . }}
  {{- end }}
"""
VALUES = "selector: true\nserviceName: web\n"
NO_SELECTOR = "selector: false\n"


def repo(tmp_path: Path, extra: dict[str, str] | None = None) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    files = {
        "web/Chart.yaml": CHART.format(version="1.0.0"),
        "web/values.yaml": VALUES,
        "web/templates/deployment.yaml": DEPLOYMENT,
        "web/templates/service.yaml": SERVICE,
        "web/ci/eks-values.yaml": "{}\n",
        "web/ci/gke-values.yaml": "{}\n",
        **(extra or {}),
    }
    for path, text in files.items():
        g.write(path, text)
    return g.commit("web 1.0.0")


def pr(g: GitBuilder, files: dict[str, str]) -> GitBuilder:
    g.branch("pr").write("web/Chart.yaml", CHART.format(version="1.0.1"))
    for path, text in files.items():
        g.write(path, text)
    return g.commit("change")


def review(g: GitBuilder) -> Report:
    """Offline: a dependency from charts.example.test is not fetched (tests reach only loopback)."""
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr", offline=True)).report


def lint(report: Report) -> list[Finding]:
    return [f for f in report.findings if f.check == "lint"]


def test_an_error_new_at_head_fails_naming_profile_file_and_line(tmp_path: Path) -> None:
    g = pr(repo(tmp_path), {"web/templates/ports.yaml": TEST_RELEASE_ONLY})
    (finding,) = lint(review(g))
    assert (finding.severity, finding.rule, finding.profile) == ("failure", "error", "eks, gke")
    assert (finding.path, finding.line) == ("web/templates/ports.yaml", 7)
    assert finding.title == "web: helm lint error in web/templates/ports.yaml line 7 on eks, gke"
    assert finding.message.startswith(
        "profiles eks, gke: `helm lint` reports an error in web/templates/ports.yaml line 7: "
    )
    assert 'no template "web.testPort" associated' in finding.message
    assert not finding.preexisting


def test_the_same_error_at_base_is_folded_even_when_its_line_moved(tmp_path: Path) -> None:
    g = repo(tmp_path, {"web/templates/ports.yaml": TEST_RELEASE_ONLY})
    g = pr(g, {"web/templates/ports.yaml": "{{/* a comment above */}}\n\n" + TEST_RELEASE_ONLY})
    (finding,) = lint(review(g))
    assert (finding.severity, finding.preexisting, finding.line) == ("notice", True, 9)
    # gke renders alike at both sides: not linted (its lint could only repeat the base's).
    assert finding.title.endswith("on eks (already at base)")
    assert finding.message.endswith("Already so at base, so not this PR's doing.")


def test_a_warning_new_at_head_is_a_warning(tmp_path: Path) -> None:
    g = pr(repo(tmp_path), {"web/ci/gke-values.yaml": "serviceName: Web_Service\n"})
    (finding,) = lint(review(g))
    assert (finding.severity, finding.rule, finding.profile) == ("warning", "warning", "gke")
    assert (finding.path, finding.line) == ("web/templates/service.yaml", None)
    assert 'object name does not conform to Kubernetes naming requirements: "Web_Service"' in (
        finding.message
    )


def test_a_version_warning_the_base_had_for_its_own_version_is_folded(tmp_path: Path) -> None:
    """aws/eks-charts writes `version: v0.5.29`: Helm warns it is not strict SemVer 2, quoting it,
    at every bump; that is the repository's convention, not the PR's doing."""
    g = repo(tmp_path, {"web/Chart.yaml": CHART.format(version="v1.0.0")})
    g = pr(
        g, {"web/Chart.yaml": CHART.format(version="v1.0.1"), "web/values.yaml": VALUES + "x: 1\n"}
    )
    (finding,) = lint(review(g))
    assert (finding.severity, finding.preexisting) == ("notice", True)
    assert "version 'v1.0.1' is not a valid SemVerV2" in finding.message


def test_a_version_warning_the_pr_brings_is_a_warning(tmp_path: Path) -> None:
    g = pr(repo(tmp_path), {"web/Chart.yaml": CHART.format(version="v1.0.1")})
    g.write("web/values.yaml", VALUES + "x: 1\n").commit("values")
    (finding,) = lint(review(g))
    assert (finding.severity, finding.rule, finding.path) == (
        "warning",
        "warning",
        "web/Chart.yaml",
    )
    assert "version 'v1.0.1' is not a valid SemVerV2" in finding.message


def test_info_messages_are_not_said(tmp_path: Path) -> None:
    # Dropping the icon makes Helm say `icon is recommended` (info) at head only.
    g = pr(repo(tmp_path), {"web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.1\n"})
    report = review(g)
    head = report_renders(g)["eks"]
    assert any(m.message == "icon is recommended" for m in head.lint or ())
    assert lint(report) == []


def test_only_the_profile_with_the_error_is_named(tmp_path: Path) -> None:
    g = pr(repo(tmp_path), {"web/ci/gke-values.yaml": NO_SELECTOR})
    (finding,) = lint(review(g))
    assert (finding.severity, finding.profile, finding.path) == (
        "failure",
        "gke",
        "web/templates/deployment.yaml",
    )
    assert finding.message == (
        "profile gke: `helm lint` reports an error in web/templates/deployment.yaml: a Deployment "
        'must contain matchLabels or matchExpressions, and "test-release-web" does not'
    )


def test_a_profile_the_pr_adds_is_compared_with_the_base_profiles(tmp_path: Path) -> None:
    g = repo(tmp_path, {"web/values.yaml": NO_SELECTOR + "serviceName: web\n"})
    g = pr(g, {"web/ci/aks-values.yaml": "{}\n"})
    findings = lint(review(g))
    # Every profile lacks the selector, at base too: the added profile is not blamed for it (eks
    # and gke render alike at both sides, so lint is not asked there: it could only repeat).
    assert [(f.severity, f.profile, f.preexisting) for f in findings] == [("notice", "aks", True)]


def test_a_render_failure_is_not_said_twice(tmp_path: Path) -> None:
    broken = SERVICE + "  clusterIP: {{ .Values.missing.ip }}\n"
    g = pr(repo(tmp_path), {"web/templates/service.yaml": broken})
    report = review(g)
    render = [f for f in report.findings if f.check == "render" and f.rule == "head-fails"]
    assert [(f.severity, f.path, f.line) for f in render] == [
        ("failure", "web/templates/service.yaml", 7)
    ]
    # Lint did find it (the same template error), and leaves it to the render check.
    head = report_renders(g)["eks"]
    assert [m.path for m in head.lint or () if m.severity == LintSeverity.ERROR] == [
        "web/templates/service.yaml"
    ]
    assert lint(report) == []


def test_a_chart_whose_dependency_is_unavailable_gets_no_lint_findings(tmp_path: Path) -> None:
    dependency = (
        "dependencies:\n  - name: redis\n    version: 1.0.0\n"
        "    repository: https://charts.example.test\n"
    )
    g = pr(repo(tmp_path), {"web/Chart.yaml": CHART.format(version="1.0.1") + dependency})
    report = review(g)
    assert {f.rule for f in report.findings if f.check == "render"} >= {"not-reviewed"}
    assert lint(report) == []


def test_disabled_in_the_config_it_does_not_run(tmp_path: Path) -> None:
    config = "checks:\n  lint:\n    enabled: false\n"
    g = repo(tmp_path, {".github/chart-review.yml": config})
    report = review(pr(g, {"web/ci/gke-values.yaml": NO_SELECTOR}))
    assert lint(report) == []
    assert "lint" not in report.checks_run


def report_renders(g: GitBuilder) -> dict[str, object]:
    """The head's renders of the chart, by profile, as the checks read them."""
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    (chart,) = engine.review(ReviewInput(base="develop", head="pr", offline=True)).context.charts
    return dict(chart.head)


class CountingLints:
    """Helm, counting the lints it is asked for, by the profile's values, and every request in
    order. A profile whose `serviceName` is in `stopped` fails as a limit stops a render."""

    def __init__(self, stopped: tuple[str, ...] = ()) -> None:
        self.helm = EmbeddedHelm()
        self.version = self.helm.version
        self.linted: list[object] = []
        self.asked: list[tuple[str, object]] = []
        self.stopped = stopped
        self._held: str | None = None  # see hold()
        self._awaited: set[object] | None = None
        self._linted = threading.Event()
        self._holding = threading.Lock()
        self.held_too_long = False

    def hold(self, render: str, until_linted: set[object]) -> None:
        """The first render of `render` waits until every profile of `until_linted` was asked
        to lint: lints asked at once need no other render done. `held_too_long` if they never
        come."""
        self._held, self._awaited = render, until_linted

    def render(self, archive: bytes, values: Any, *rest: Any) -> dict[str, str]:
        self.asked.append(("render", values.get("serviceName")))
        with self._holding:  # one render held, base's or head's: the other threads go on
            held = self._held is not None and self._held == values.get("serviceName")
            if held:
                self._held = None
        if held:
            self.held_too_long = not self._linted.wait(timeout=30)
        if values.get("serviceName") in self.stopped:
            raise RenderFailure("render exceeded its time limit (1 s of CPU time)")
        return self.helm.render(archive, values, *rest)

    def render_linted(self, archive: bytes, values: Any, *rest: Any) -> Linted:
        self.linted.append(values.get("serviceName"))
        self.asked.append(("lint", values.get("serviceName")))
        if self._awaited is not None and self._awaited <= set(self.linted):
            self._linted.set()
        if values.get("serviceName") in self.stopped:
            stopped = RenderFailure("render exceeded its time limit (1 s of CPU time)")
            return Linted(None, stopped, None)
        return self.helm.render_linted(archive, values, *rest)


def test_lint_is_asked_only_where_the_pr_changed_a_render_and_once_for_the_chart(
    tmp_path: Path,
) -> None:
    """A PR that changes gke's render alone: gke is linted at head, and eks (the first profile,
    for what lint says of the chart itself); a third profile rendering alike is not."""
    g = repo(tmp_path, {"web/ci/oc-values.yaml": "serviceName: oc\n"})
    g = pr(g, {"web/ci/gke-values.yaml": "serviceName: gke-new\n"})
    helm = CountingLints()
    engine = Engine(GitRepo(g.path), helm, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", offline=True)).report
    assert sorted(map(str, helm.linted)) == ["None", "gke-new"]  # eks's values are {}
    assert lint(report) == []


def test_a_chart_level_lint_error_the_pr_brings_is_found_on_the_first_profile(
    tmp_path: Path,
) -> None:
    """A Chart.yaml lint rejects changes no render: the first profile is always linted."""
    maintainer = "maintainers:\n  - name: web team\n    email: not-an-address\n"
    g = pr(repo(tmp_path), {"web/Chart.yaml": CHART.format(version="1.0.1") + maintainer})
    findings = lint(review(g))
    assert [(f.severity, f.profile) for f in findings] == [("failure", "eks")]
    assert "invalid email" in findings[0].message


def test_the_lints_sure_to_be_wanted_are_asked_at_once_the_others_after_every_render(
    tmp_path: Path,
) -> None:
    """Lint costs 10-15 renders, so the lint sure to be wanted (the first profile's, and a profile's
    the PR adds) is asked at once, right after its render, which the checks read without waiting
    for it; the others' wait for both sides' renders, which say where the PR changed something."""
    g = repo(tmp_path, {"web/ci/oc-values.yaml": "serviceName: oc\n"})
    g = pr(
        g,
        {
            "web/ci/gke-values.yaml": "serviceName: gke-new\n",
            "web/ci/new-values.yaml": "serviceName: added\n",
        },
    )
    helm = CountingLints()
    # oc's first render is not done until eks's and new's lints are asked: they wait for no
    # render but their own (the order threads append in is no evidence under load).
    helm.hold("oc", until_linted={None, "added"})
    engine = Engine(GitRepo(g.path), helm, REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", offline=True))
    assert not helm.held_too_long
    assert sorted(map(str, helm.linted)) == ["None", "added", "gke-new"]  # eks, new, gke at head
    renders = [values for kind, values in helm.asked if kind == "render"]
    # Every profile rendered on its own (eks and gke have the same values at base: one render).
    assert sorted(map(str, renders)) == ["None", "None", "added", "gke-new", "oc", "oc"]
    later = helm.asked.index(("lint", "gke-new"))
    # gke's lint was decided by both sides' renders, so asked after all of them.
    assert later > max(i for i, (kind, _) in enumerate(helm.asked) if kind == "render")
    (chart,) = result.context.charts
    assert all(chart.head[p].lint is not None for p in ("eks", "gke", "new"))
    assert chart.head["oc"].lint is None
    assert lint(result.report) == []


def test_a_first_profile_a_limit_stops_hands_the_chart_wide_lint_to_the_next(
    tmp_path: Path,
) -> None:
    """The first profile is linted early for what lint says of the chart itself; where a limit
    stops its render, that falls to the first profile that renders, as if it had come first."""
    g = repo(
        tmp_path,
        {
            "web/ci/gke-values.yaml": "serviceName: gke\n",
            "web/ci/oc-values.yaml": "serviceName: oc\n",
        },
    )
    g = pr(g, {"web/ci/eks-values.yaml": "serviceName: slow\n"})
    helm = CountingLints(stopped=("slow",))
    engine = Engine(GitRepo(g.path), helm, REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", offline=True))
    # eks's early lint is asked if it reaches the cache before its own render's failure does
    # (which lint would only meet again): either way, once at most, and gke takes over.
    assert helm.linted in (["slow", "gke"], ["gke"])
    (chart,) = result.context.charts
    assert chart.head["gke"].lint is not None and chart.head["oc"].lint is None


class CountingRequests:
    """Helm, noting each request by its kind and the profile's values."""

    def __init__(self) -> None:
        self.helm = EmbeddedHelm()
        self.version = self.helm.version
        self.asked: list[tuple[str, str]] = []

    def render(self, archive: bytes, values: Any, *rest: Any) -> dict[str, str]:
        self.asked.append(("render", str(values)))
        return self.helm.render(archive, values, *rest)

    def render_linted(self, archive: bytes, values: Any, *rest: Any) -> Linted:
        self.asked.append(("render and lint", str(values)))
        return self.helm.render_linted(archive, values, *rest)

    def lint_alone(self, archive: bytes, values: Any, *rest: Any) -> Linted:
        self.asked.append(("lint", str(values)))
        return self.helm.lint_alone(archive, values, *rest)


def test_a_render_is_linted_without_rendering_again_and_the_same_output_once(
    tmp_path: Path,
) -> None:
    """gke's values differ from eks's but render byte for byte what eks's do: one lint says what
    both would, and each profile is rendered once, its lint asked of Helm alone."""
    g = repo(
        tmp_path,
        {"web/ci/gke-values.yaml": "unread: true\n", "web/ci/oc-values.yaml": "serviceName: oc\n"},
    )
    g = pr(g, {"web/templates/test.yaml": TEST_RELEASE_ONLY})
    helm = CountingRequests()
    engine = Engine(GitRepo(g.path), helm, REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr", offline=True)).report
    lints = sorted(values for kind, values in helm.asked if kind != "render")
    # eks and oc at head and, as the head's lint says something, at base: gke's output is eks's.
    assert lints == sorted(map(str, [{}, {}, {"serviceName": "oc"}, {"serviceName": "oc"}]))
    assert [kind for kind, _ in helm.asked].count("render and lint") == 0
    renders = sorted(values for kind, values in helm.asked if kind == "render")
    each = [{}, {"unread": True}, {"serviceName": "oc"}]
    assert renders == sorted(map(str, each + each))  # each profile once a side, lint or not
    (found,) = lint(report)
    assert (found.severity, found.profile) == ("failure", "eks, gke, oc")
