"""One-click fixes, proven: each kind of suggestion applied to the head as GitHub's "Commit
suggestion" would (the lines replaced, committed), re-rendered and re-reviewed, and the finding is
gone; a fix that would not render, or would not fix, is never offered."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.check import Check, Registry
from bot.model.context import ChartContext
from bot.model.report import Finding, Report, Severity
from bot.model.suggestion import Suggestion, with_suggestion
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder
from tests.support.manifests import guaranteed_web, shipper

CHART = "app"
TEMPLATE = f"{CHART}/templates/web.yaml"


def chart_yaml(version: str, app: str | None = None) -> str:
    return f'apiVersion: v2\nname: app\nversion: {version}\nappVersion: "{app or version}"\n'


def review(g: GitBuilder, check: str, head: str = "pr") -> Report:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    inp = ReviewInput(base="develop", head=head, only_checks=(check,))
    report = engine.review(inp).report
    assert not report.findings_for("render"), report.findings_for("render")
    return report


def only(report: Report, check: str, rule: str) -> Finding:
    found = [f for f in report.findings_for(check) if f.rule == rule]
    assert len(found) == 1, report.findings_for(check)
    return found[0]


def commit_suggestion(g: GitBuilder, f: Finding) -> None:
    """What GitHub does on "Commit suggestion": the lines replaced in the PR's branch, committed."""
    s = f.suggestion
    assert s is not None, f.suggestion_refused
    g.checkout("pr")
    text = (g.path / s.path).read_text()
    patched = s.apply(text)
    assert patched is not None
    g.write(s.path, patched).commit("Apply suggestions from code review")


def repo(
    tmp_path: Path,
    base: dict[str, str],
    head: dict[str, str],
    develop: dict[str, str] | None = None,
) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in base.items():
        g.write(path, textwrap.dedent(text))
    g.commit("base").branch("pr")
    for path, text in head.items():
        g.write(path, textwrap.dedent(text))
    g.commit("the pull request")
    if develop:
        g.checkout("develop")
        for path, text in develop.items():
            g.write(path, textwrap.dedent(text))
        g.commit("develop moves on")
    return g


PLAIN = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: {{ .Release.Name }}-web
    data:
      greeting: %s
    """


def test_version_taken_by_develop_suggests_the_next_free_version_and_app_version(
    tmp_path: Path,
) -> None:
    base = {f"{CHART}/Chart.yaml": chart_yaml("1.0.0"), TEMPLATE: PLAIN % "hello"}
    head = {f"{CHART}/Chart.yaml": chart_yaml("1.1.0"), TEMPLATE: PLAIN % "hi"}
    develop = {f"{CHART}/Chart.yaml": chart_yaml("1.1.0"), f"{CHART}/values.yaml": "a: 1\n"}
    g = repo(tmp_path, base, head, develop)
    taken = only(review(g, "version"), "version", "taken-by-develop")
    assert taken.suggestion == Suggestion(
        f"{CHART}/Chart.yaml", 3, 4, 'version: 1.2.0\nappVersion: "1.2.0"\n', ("default",)
    )
    commit_suggestion(g, taken)
    after = review(g, "version")
    assert [f.rule for f in after.findings_for("version")] == []


WEB = guaranteed_web()
SHIPPER = shipper()


def qos_repo(tmp_path: Path, sidecar: str) -> GitBuilder:
    base = {f"{CHART}/Chart.yaml": chart_yaml("1.0.0"), TEMPLATE: WEB}
    head = {TEMPLATE: WEB + sidecar}
    return repo(tmp_path, base, head)


def test_qos_downgrade_suggests_the_sidecar_block_with_requests_equal_to_limits(
    tmp_path: Path,
) -> None:
    g = qos_repo(tmp_path, SHIPPER)
    down = only(review(g, "qos"), "qos", "downgrade")
    s = down.suggestion
    assert s is not None
    # Only the lines that differ: the limits gain cpu 50m (its own request, for both), after what
    # they already say, so the suggestion is one line grown into two.
    assert (s.start_line, s.line) == (31, 31)
    assert s.replacement == "              memory: 32Mi\n              cpu: 50m\n"
    assert s.verified_on == ("default",)
    commit_suggestion(g, down)
    assert review(g, "qos").findings_for("qos") == []


def test_qos_block_inserted_where_a_new_container_sets_none(tmp_path: Path) -> None:
    bare = "        - name: shipper\n          image: example/shipper:1\n"
    g = qos_repo(tmp_path, bare)
    down = only(review(g, "qos"), "qos", "downgrade")
    s = down.suggestion
    assert s is not None
    assert s.replacement == (
        "        - name: shipper\n"
        "          resources:\n"
        "            requests:\n"
        "              cpu: 10m\n"
        "              memory: 16Mi\n"
        "            limits:\n"
        "              cpu: 10m\n"
        "              memory: 16Mi\n"
    )
    assert s.start_line == s.line == 24
    commit_suggestion(g, down)
    assert review(g, "qos").findings_for("qos") == []


def test_qos_block_from_values_gets_no_suggestion(tmp_path: Path) -> None:
    from_values = (
        "        - name: shipper\n"
        "          image: example/shipper:1\n"
        "          resources:\n"
        "            {{- toYaml .Values.shipper | nindent 12 }}\n"
    )
    values = "shipper:\n  requests: {cpu: 50m, memory: 32Mi}\n  limits: {memory: 32Mi}\n"
    base = {f"{CHART}/Chart.yaml": chart_yaml("1.0.0"), TEMPLATE: WEB}
    g = repo(tmp_path, base, {TEMPLATE: WEB + from_values, f"{CHART}/values.yaml": values})
    down = only(review(g, "qos"), "qos", "downgrade")
    assert "fix" in down.data
    assert down.suggestion is None and down.suggestion_refused is None


def test_qos_fix_of_the_branch_that_does_not_render_is_refused(tmp_path: Path) -> None:
    """Two blocks for one container, chosen by a condition: the literal edit lands in the first,
    the profile renders the second, so the finding would stay: no suggestion, and why."""
    branches = (
        "        - name: shipper\n"
        "          image: example/shipper:1\n"
        "          {{- if .Values.big }}\n"
        "          resources:\n"
        "            requests: {cpu: 40m, memory: 32Mi}\n"
        "            limits: {memory: 32Mi}\n"
        "          {{- else }}\n"
        "          resources:\n"
        "            requests:\n"
        "              cpu: 50m\n"
        "              memory: 32Mi\n"
        "            limits:\n"
        "              memory: 32Mi\n"
        "          {{- end }}\n"
    )
    g = qos_repo(tmp_path, branches)
    down = only(review(g, "qos"), "qos", "downgrade")
    assert down.suggestion is None
    assert down.suggestion_refused == "the suggested change does not make this finding go away"


OPENSHIFT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: example/web:1
          ports:
            - name: http
              containerPort: 8080
          securityContext:
            runAsNonRoot: true
%s"""
MARKED = "profiles:\n  - name: oc\n    arbitrary_uid: true\n"


def marked_repo(tmp_path: Path, added: str) -> GitBuilder:
    base = {
        f"{CHART}/Chart.yaml": chart_yaml("1.0.0"),
        f"{CHART}/ci/oc-values.yaml": "{}\n",
        ".github/chart-review.yml": MARKED,
        TEMPLATE: OPENSHIFT % "",
    }
    return repo(tmp_path, base, {TEMPLATE: OPENSHIFT % added})


def test_pinned_run_as_user_suggests_removing_the_line(tmp_path: Path) -> None:
    g = marked_repo(tmp_path, "            runAsUser: 1000\n")
    pinned = only(review(g, "uid"), "uid", "pinned-uid")
    assert pinned.suggestion == Suggestion(TEMPLATE, 22, 22, "", ("oc",))
    commit_suggestion(g, pinned)
    assert review(g, "uid").findings_for("uid") == []


def test_wrong_named_probe_port_suggests_the_declared_name(tmp_path: Path) -> None:
    probe = "          readinessProbe:\n            httpGet:\n              path: /ready\n"
    g = marked_repo(tmp_path, probe + "              port: http-web  # the app's port\n")
    wrong = only(review(g, "probes"), "probes", "probe-port")
    s = wrong.suggestion
    assert s is not None
    assert (s.start_line, s.line) == (25, 25)
    assert s.replacement == "              port: http  # the app's port\n"
    commit_suggestion(g, wrong)
    assert review(g, "probes").findings_for("probes") == []


def _greets_hi(ctx: ChartContext) -> list[Finding]:
    """A check for the test: a ConfigMap greeting "hi" is a finding, whose proposed fix is the
    edit `BROKEN_EDIT`, which no profile can render."""
    found = []
    for rendered in ctx.chart.head.values():
        for doc in rendered.documents:
            if doc.kind == "ConfigMap" and (doc.body.get("data") or {}).get("greeting") == "hi":
                f = Finding("greeter", Severity.WARNING, "says hi", "say hello", rule="hi")
                edit = Suggestion(TEMPLATE, 6, 6, BROKEN_EDIT)
                found.append(with_suggestion(replace(f, chart=ctx.chart.path, path=TEMPLATE), edit))
    return found


BROKEN_EDIT = "  greeting: {{ .Values.nothing.here }}\n"


def test_a_fix_that_does_not_render_is_not_offered(tmp_path: Path) -> None:
    base = {f"{CHART}/Chart.yaml": chart_yaml("1.0.0"), TEMPLATE: PLAIN % "hello"}
    g = repo(tmp_path, base, {TEMPLATE: PLAIN % "hi"})
    registry = Registry((Check("greeter", "Greetings", _greets_hi),))
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), registry, RenderCache())
    (f,) = engine.review(ReviewInput(base="develop", head="pr")).report.findings
    assert f.suggestion is None
    why = f.suggestion_refused or ""
    assert why.startswith("the suggested change does not render on profile default: ")
    assert "nil pointer" in why
