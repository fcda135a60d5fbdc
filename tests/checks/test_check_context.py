"""Checks run on contexts built from YAML text (tests/support/check_context.py): no git, no Helm,
milliseconds a test. The end-to-end tests beside these hold the same rules through a real
repository and real renders; these pin each check's own logic."""

from __future__ import annotations

import pytest

from bot.errors import ChartReviewError
from bot.model.report import Severity
from tests.support.check_context import ONE_TEMPLATE, changes, chart_context, run_check

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
