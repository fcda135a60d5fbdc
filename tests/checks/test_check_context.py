"""Checks run on contexts built from YAML text (tests/support/check_context.py): no git, no Helm,
milliseconds a test. The end-to-end tests beside these hold the same rules through a real
repository and real renders; these pin each check's own logic."""

from __future__ import annotations

import pytest

from bot.errors import ChartReviewError
from bot.model.report import Severity
from tests.support.check_context import (
    ONE_TEMPLATE,
    changes,
    chart_context,
    files_context,
    review_files,
    run_check,
)

WEB = "Deployment/default/web"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: %(selected)s}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{name: http, containerPort: 8080}]
          %(probe)s
"""
NO_PROBE = ""
READY_ON_WEB = "readinessProbe: {httpGet: {path: /healthz, port: web}}"
LIVE_ON_HTTP = "livenessProbe: {httpGet: {path: /healthz, port: http}}"


def deployment(probe: str = NO_PROBE, selected: str = "web") -> str:
    return DEPLOYMENT % {"probe": probe, "selected": selected}


def test_a_probe_on_a_port_no_container_declares_fails_on_every_profile_it_renders() -> None:
    ctx = chart_context(
        {"aks": deployment(), "eks": deployment()},
        {"aks": deployment(READY_ON_WEB), "eks": deployment(READY_ON_WEB)},
    )
    [found] = run_check("probes", ctx)
    assert (found.severity, found.rule, found.profile, found.subject) == (
        Severity.FAILURE,
        "probe-port",
        "aks, eks",
        WEB,
    )
    assert found.path == f"charts/app/{ONE_TEMPLATE}"
    assert "port web, which matches no containerPort" in found.message


def test_the_same_probe_at_base_and_head_is_folded_as_pre_existing() -> None:
    ctx = chart_context({"aks": deployment(READY_ON_WEB)}, {"aks": deployment(READY_ON_WEB)})
    [found] = run_check("probes", ctx)
    assert (found.severity, found.preexisting) == (Severity.NOTICE, True)
    assert found.title.endswith("(already at base)")


def test_the_config_is_read_from_its_text_as_the_engine_reads_it() -> None:
    forbid = 'probes:\n  forbid:\n    "Deployment/web": [liveness]\n'
    ctx = chart_context({"aks": deployment()}, {"aks": deployment(LIVE_ON_HTTP)}, config=forbid)
    [found] = run_check("probes", ctx)
    assert (found.severity, found.rule) == (Severity.FAILURE, "forbidden-probe")
    assert (
        run_check("probes", chart_context({"aks": deployment()}, {"aks": deployment(LIVE_ON_HTTP)}))
        == []
    )


def test_a_selector_the_pr_points_away_from_its_pods_fails() -> None:
    ctx = chart_context({"default": deployment()}, {"default": deployment(selected="api")})
    [found] = run_check("selectors", ctx)
    assert (found.severity, found.rule, found.subject) == (Severity.FAILURE, "selects-nothing", WEB)


def test_renders_given_by_template_keep_each_template_s_path() -> None:
    ctx = chart_context(
        {"default": {"templates/web.yaml": deployment()}},
        {"default": {"templates/web.yaml": deployment(READY_ON_WEB)}},
    )
    [found] = run_check("probes", ctx)
    assert found.path == "charts/app/templates/web.yaml"


def test_a_check_that_asks_git_is_told_to_use_a_real_repository() -> None:
    ctx = chart_context({"default": deployment()}, {"default": deployment()})
    with pytest.raises(ChartReviewError, match="test it on a real repository"):
        ctx.git.merge_base("a", "b")


def test_changes_number_the_lines_each_side_added_and_lost() -> None:
    [values] = changes({"v.yaml": "a: 1\nb: 2\nc: 3\n"}, {"v.yaml": "a: 1\nb: 20\nc: 3\nd: 4\n"})
    assert (values.status, values.added_lines, values.removed_lines) == (
        "M",
        frozenset({2, 4}),
        frozenset({2}),
    )
    added, gone = changes({}, {"new.yaml": "x\n"}), changes({"old.yaml": "x\n"}, {})
    assert [(c.path, c.status) for c in (*added, *gone)] == [("new.yaml", "A"), ("old.yaml", "D")]


CHART_FILES = {
    "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 1.0.0\n",
    "app/values.yaml": "{}\n",
    "app/templates/web.yaml": deployment().replace("name: web}", "name: {{ .Release.Name }}-web}"),
    "app/templates/NOTES.txt": "installed {{ .Release.Name }}\n",
    "app/ci/aks-values.yaml": "global: {openshift: true}\n",
    "app/ci/eks-values.yaml": "{}\n",
}


def test_files_context_finds_the_profiles_and_their_values_as_the_engine_does() -> None:
    marked = "profiles:\n  - name: eks\n    arbitrary_uid: true\n"
    head = {"app/ci/gke-values.yaml": "replicas: 2\n", "app/ci/eks-values.yaml": "replicas: 3\n"}
    ctx = files_context(CHART_FILES, head, config=marked)
    assert (sorted(ctx.chart.base), sorted(ctx.chart.head)) == (
        ["aks", "eks"],
        ["aks", "eks", "gke"],
    )
    assert ctx.chart.head["aks"].values == {"global": {"openshift": True}}
    assert (ctx.chart.base["eks"].values, ctx.chart.head["eks"].values) == ({}, {"replicas": 3})
    assert ctx.chart.head["gke"].values == {"replicas": 2}
    assert [(p.name, p.values_file, p.arbitrary_uid) for p in ctx.chart.profiles.values()] == [
        ("aks", "app/ci/aks-values.yaml", False),
        ("eks", "app/ci/eks-values.yaml", True),
        ("gke", "app/ci/gke-values.yaml", False),
    ]
    assert [(c.path, c.status) for c in ctx.changes] == [
        ("app/ci/eks-values.yaml", "M"),
        ("app/ci/gke-values.yaml", "A"),
    ]


def test_files_context_renders_the_release_s_name_and_refuses_any_other_directive() -> None:
    [doc] = files_context(CHART_FILES, CHART_FILES).chart.head["eks"].documents
    assert (doc.key, doc.template) == ("Deployment/default/release-web", "app/templates/web.yaml")
    templated = {"app/templates/web.yaml": deployment().replace("web:1", "{{ .Values.tag }}")}
    with pytest.raises(ChartReviewError, match="templates/web.yaml: a directive other than"):
        files_context(CHART_FILES, templated)


def test_the_head_is_laid_over_the_base_and_none_deletes_a_file() -> None:
    ctx = files_context(CHART_FILES, {"app/ci/aks-values.yaml": None})
    assert (sorted(ctx.chart.head), ctx.head.is_file("app/templates/web.yaml")) == (["eks"], True)
    assert [(c.path, c.status) for c in ctx.changes] == [("app/ci/aks-values.yaml", "D")]
    # Trees of other files are other commits: what a check remembers of one never answers another.
    assert ctx.base.commit != ctx.head.commit
    assert files_context(CHART_FILES, {}).head.commit == ctx.base.commit


def test_review_files_applies_the_config_s_severities_as_the_engine_does() -> None:
    head = {
        "app/templates/web.yaml": CHART_FILES["app/templates/web.yaml"].replace(
            "ports:", f"{READY_ON_WEB}\n          ports:"
        )
    }
    [found] = review_files(CHART_FILES, head, "probes")
    assert (found.severity, found.rule, found.subject) == (
        Severity.FAILURE,
        "probe-port",
        "Deployment/default/release-web",
    )
    lowered = "probes:\n  severity: notice\n"
    [found] = review_files(CHART_FILES, head, "probes", config=lowered)
    assert found.severity == Severity.NOTICE
