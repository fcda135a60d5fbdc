"""The kube check: rendered objects against the Kubernetes API of the target version, custom
resources against the chart's CRDs, and removed or deprecated apiVersions, on synthetic charts in
real git repositories rendered by the real Helm."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from bot.model.report import Finding, Severity
from checks.kube.schemas import api_schemas
from tests.support.gitbuilder import GitBuilder
from tests.support.pr_review import CHART, chart, line_of, review_pr, template
from tests.support.report_schema import validated

AT_1_30 = 'kube_version: "1.30"\n'
DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      replicas: {{ .Values.replicas }}
      selector:
        matchLabels: {app: web}
      template:
        metadata:
          labels: {app: web}
        spec:
          containers:
            - name: sidecar
              image: example/sidecar:1
            - name: web
              image: example/web:1
              %(extra)s
    """
WEB = "Deployment/default/web"
TEMPLATE = template("web.yaml")
PROFILES = {"aks": "replicas: 2\n", "eks": "replicas: 5\n"}
PSP = """\
    apiVersion: policy/v1beta1
    kind: PodSecurityPolicy
    metadata:
      name: restricted
    spec:
      privileged: false
    """
INGRESS = """\
    apiVersion: extensions/v1beta1
    kind: Ingress
    metadata:
      name: web
    spec:
      backend: {serviceName: web, servicePort: 80}
    """
CRD = """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.com
    spec:
      group: example.com
      names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
      scope: Namespaced
      versions:
        - name: v1
          served: true
          storage: true
          schema:
            openAPIV3Schema:
              type: object
              properties:
                spec:
                  type: object
                  required: [size]
                  properties:
                    size: {type: integer, minimum: 1}
                    port: {x-kubernetes-int-or-string: true}
                    color: {type: string, enum: [red, blue]}
                    extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
    """
WIDGET = """\
    apiVersion: example.com/v1
    kind: Widget
    metadata:
      name: thing
    spec:
      %(spec)s
    """


def web(extra: str = "", replicas: str = "{{ .Values.replicas }}") -> dict[str, str]:
    text = DEPLOYMENT.replace("{{ .Values.replicas }}", replicas) % {"extra": extra}
    return chart({"web.yaml": text}, PROFILES)


def test_a_removed_api_version_fails_naming_its_replacement_or_that_there_is_none(
    tmp_path: Path,
) -> None:
    head = web() | chart({"psp.yaml": PSP, "ingress.yaml": INGRESS}, PROFILES)
    found = review_pr(tmp_path, web(), head, "kube", AT_1_30)
    psp, ingress = template("psp.yaml"), template("ingress.yaml")
    assert [(f.severity, f.rule, f.subject, f.path, f.line) for f in found] == [
        (Severity.FAILURE, "removed-api", "Ingress/default/web", ingress, 1),
        (Severity.FAILURE, "removed-api", "PodSecurityPolicy/default/restricted", psp, 1),
    ]
    assert found[0].message == (
        "profiles aks, eks: Ingress/default/web: extensions/v1beta1 Ingress is not served by "
        "Kubernetes 1.30: deprecated in 1.14, removed in 1.22, so the API server refuses it; "
        "use networking.k8s.io/v1 Ingress."
    )
    assert found[1].message.startswith(
        "profiles aks, eks: PodSecurityPolicy/default/restricted: policy/v1beta1 "
        "PodSecurityPolicy is not served by Kubernetes 1.30: deprecated in 1.21, removed in "
        "1.25, so the API server refuses it; PodSecurityPolicy has no replacement API: Pod "
        "Security Admission"
    )
    assert found[1].data["replacement"] is None


def test_a_string_replicas_and_an_unknown_container_field_fail_on_their_lines(
    tmp_path: Path,
) -> None:
    head = web(
        extra="imagePullPolicy: Always\n              bogus: 1", replicas='"{{ .Values.replicas }}"'
    )
    found = review_pr(tmp_path, web(), head, "kube", AT_1_30)
    text = head[TEMPLATE]
    assert found == [
        Finding(
            check="kube",
            severity=Severity.FAILURE,
            title=f"{WEB}: spec.replicas is the string '2' on aks",
            message=(
                f"profile aks: {WEB}: spec.replicas is the string '2', where Kubernetes takes an "
                "integer (apps/v1 Deployment, the API of Kubernetes 1.30): the API server refuses "
                "the object."
            ),
            rule="rejected-field",
            chart=CHART,
            profile="aks",
            subject=WEB,
            path=TEMPLATE,
            line=line_of(head, TEMPLATE, "replicas:"),
            data={
                "container": None,
                "detail": "spec.replicas: is the string '2', where Kubernetes takes an integer",
                "profiles": ["aks"],
                "field": "spec.replicas",
                "problem": "is the string '2', where Kubernetes takes an integer",
                "schema": "the API of Kubernetes 1.30",
            },
        ),
        Finding(
            check="kube",
            severity=Severity.FAILURE,
            title=f"{WEB}: spec.template.spec.containers[web].bogus is not a known field on aks, eks",
            message=(
                f"profiles aks, eks: {WEB}: spec.template.spec.containers[web].bogus is not a "
                "field Kubernetes knows here (apps/v1 Deployment, the API of Kubernetes 1.30): the "
                "API server drops it (with a warning), or refuses the object where fields are "
                "validated strictly, as kubectl does by default: what it sets never takes effect."
            ),
            rule="unknown-field",
            chart=CHART,
            profile="aks, eks",
            subject=WEB,
            path=TEMPLATE,
            line=line_of(head, TEMPLATE, "bogus:"),
            data={
                "container": None,
                "detail": "spec.template.spec.containers[web].bogus: is not a field Kubernetes "
                "knows here",
                "profiles": ["aks", "eks"],
                "field": "spec.template.spec.containers[web].bogus",
                "problem": "is not a field Kubernetes knows here",
                "schema": "the API of Kubernetes 1.30",
            },
        ),
        Finding(
            check="kube",
            severity=Severity.FAILURE,
            title=f"{WEB}: spec.replicas is the string '5' on eks",
            message=(
                f"profile eks: {WEB}: spec.replicas is the string '5', where Kubernetes takes an "
                "integer (apps/v1 Deployment, the API of Kubernetes 1.30): the API server refuses "
                "the object."
            ),
            rule="rejected-field",
            chart=CHART,
            profile="eks",
            subject=WEB,
            path=TEMPLATE,
            line=line_of(head, TEMPLATE, "replicas:"),
            data={
                "container": None,
                "detail": "spec.replicas: is the string '5', where Kubernetes takes an integer",
                "profiles": ["eks"],
                "field": "spec.replicas",
                "problem": "is the string '5', where Kubernetes takes an integer",
                "schema": "the API of Kubernetes 1.30",
            },
        ),
    ]
    assert text.splitlines()[found[1].line - 1].strip() == "bogus: 1"


def test_what_the_base_renders_too_is_folded(tmp_path: Path) -> None:
    base = web(extra="bogus: 1")
    head = web(extra="bogus: 1\n              imagePullPolicy: Always")
    [found] = review_pr(tmp_path, base, head, "kube", AT_1_30)
    assert (found.severity, found.rule, found.data["field"], found.preexisting) == (
        Severity.NOTICE,
        "unknown-field",
        "spec.template.spec.containers[web].bogus",
        True,
    )


def test_a_custom_resource_is_checked_against_the_crd_the_chart_renders(tmp_path: Path) -> None:
    spec = "size: big\n      port: http\n      colour: red\n      extra: {anything: 1}"
    head = chart({"crd.yaml": CRD, "widget.yaml": WIDGET % {"spec": spec}})
    base = chart({"crd.yaml": CRD, "widget.yaml": WIDGET % {"spec": "size: 2"}})
    found = review_pr(tmp_path, base, head, "kube", AT_1_30)
    widget = head[template("widget.yaml")]
    # worst first, then by line: all failures here
    assert [(f.rule, f.data["field"], f.data["problem"], f.line) for f in found] == [
        (
            "rejected-field",
            "spec.size",
            "is the string 'big', where Kubernetes takes an integer",
            line_of(head, template("widget.yaml"), "size:"),
        ),
        (
            "unknown-field",
            "spec.colour",
            "is not a field Kubernetes knows here",
            line_of(head, template("widget.yaml"), "colour:"),
        ),
    ]
    assert {f.data["schema"] for f in found} == {
        "the schema of the chart's CRD widgets.example.com"
    }
    assert "port: http" in widget  # an int-or-string takes a name


def test_a_custom_resource_against_a_crd_of_the_charts_crds_directory(tmp_path: Path) -> None:
    files = chart({"widget.yaml": WIDGET % {"spec": "color: green"}})
    files[f"{CHART}/crds/widgets.yaml"] = textwrap.dedent(CRD)
    found = review_pr(tmp_path, chart({"cm.yaml": "{}\n"}), files, "kube", AT_1_30)
    assert sorted((f.rule, f.data["field"], f.data["problem"]) for f in found) == [
        ("rejected-field", "spec.color", "is the string 'green', not one of 'red', 'blue'"),
        ("rejected-field", "spec.size", "is required, and not set"),
    ]


def test_a_version_the_crd_does_not_serve_and_a_kind_kubernetes_does_not_have(
    tmp_path: Path,
) -> None:
    bad = WIDGET.replace("example.com/v1", "example.com/v2") % {"spec": "size: 1"}
    typo = DEPLOYMENT.replace("kind: Deployment", "kind: Deploymnet") % {"extra": ""}
    head = chart({"crd.yaml": CRD, "widget.yaml": bad, "web.yaml": typo}, PROFILES)
    found = review_pr(tmp_path, chart({"crd.yaml": CRD}, PROFILES), head, "kube", AT_1_30)
    assert [(f.rule, f.subject, f.message.split(": ", 2)[-1]) for f in found] == [
        (
            "unknown-api",
            "Deploymnet/default/web",
            "Kubernetes 1.30 serves no Deploymnet in apps/v1: the API server has no such kind, "
            "and refuses the object.",
        ),
        (
            "unknown-api",
            "Widget/default/thing",
            "the chart's CRD for Widget serves v1, not this version: the API server has no such "
            "kind, and refuses the object.",
        ),
    ]


def test_a_deprecated_api_warns_with_the_release_that_removes_it(tmp_path: Path) -> None:
    pdb = (
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n"
        "spec:\n  minAvailable: 1\n  selector:\n    matchLabels: {app: web}\n"
    )
    head = web() | chart({"pdb.yaml": pdb}, PROFILES)
    found = review_pr(tmp_path, web(), head, "kube", 'kube_version: "1.24"\n')
    assert [(f.severity, f.rule) for f in found] == [
        (Severity.WARNING, "deprecated-api"),
        (Severity.NOTICE, "not-validated"),
    ]
    assert found[1].message.startswith(
        "The chart was rendered for v1.24.0, and the review has the Kubernetes API's schemas of "
        "v1.25–v1.37 only (kubernetes-validate): its objects were not checked against the API"
    )
    assert found[0].message == (
        "profiles aks, eks: PodDisruptionBudget/default/web: policy/v1beta1 PodDisruptionBudget "
        "is deprecated since Kubernetes 1.21, and removed in 1.25: use policy/v1 "
        "PodDisruptionBudget."
    )


def test_validators_are_made_once_per_kind_and_objects_checked_once_however_many_renders(
    tmp_path: Path,
) -> None:
    """1.27 is this test's own version: what its schemas hold afterwards is what this review made.
    Two profiles at two sides render the three objects 12 times; the Deployment differs by
    profile and the ConfigMap by side, the Service not at all: 5 distinct objects, 3 kinds."""
    service = (
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports: [{port: 80}]\n"
    )
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: %s\n"
    base = web() | chart({"svc.yaml": service, "cm.yaml": cm % "b"}, PROFILES)
    head = web() | chart({"svc.yaml": service, "cm.yaml": cm % "c"}, PROFILES)
    assert review_pr(tmp_path, base, head, "kube", 'kube_version: "1.27"\n') == []
    schemas = api_schemas((1, 27))
    assert schemas is not None
    assert sorted(schemas.validators) == [
        ("", "v1", "ConfigMap"),
        ("", "v1", "Service"),
        ("apps", "v1", "Deployment"),
    ]
    assert len(schemas.checked) == 5


def test_the_command_line_fails_on_a_removed_api_at_the_kube_version_it_is_given(
    tmp_path: Path,
) -> None:
    g = GitBuilder(tmp_path / "repo")
    for path, text in web().items():
        g.write(path, text)
    g.commit("base").branch("pr")
    for path, text in chart({"psp.yaml": PSP}, PROFILES).items():
        g.write(path, text)
    g.commit("pr")
    args = [
        "review",
        "--repo",
        str(g.path),
        "--base",
        "develop",
        "--head",
        "pr",
        "--format",
        "json",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args, "--kube-version", "1.29"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    kube = [f for f in validated(proc.stdout)["findings"] if f["check"] == "kube"]
    assert [(f["rule"], f["severity"], f["data"]["kube_version"]) for f in kube] == [
        ("removed-api", "failure", "1.29")
    ]


APISERVICE = """\
    {{- if .Capabilities.APIVersions.Has "apiregistration.k8s.io/v1" }}
    apiVersion: apiregistration.k8s.io/v1
    {{- else }}
    apiVersion: apiregistration.k8s.io/v1beta1
    {{- end }}
    kind: APIService
    metadata:
      name: v1beta1.custom.metrics.k8s.io
    spec:
      group: custom.metrics.k8s.io
      version: v1beta1
      groupPriorityMinimum: 100
      versionPriority: 100
      service: {name: adapter, namespace: default}
    """


def test_an_old_api_version_a_template_picks_for_want_of_the_new_is_a_notice(
    tmp_path: Path,
) -> None:
    """prometheus-adapter's pattern: Helm's own API versions lack apiregistration.k8s.io/v1, which
    every cluster of 1.30 serves, so `helm template` renders the removed v1beta1."""
    head = chart({"apiservice.yaml": APISERVICE})
    [found] = review_pr(tmp_path, chart({}), head, "kube", AT_1_30)
    assert (found.severity, found.rule, found.line) == (
        Severity.NOTICE,
        "api-version-from-capabilities",
        line_of(head, template("apiservice.yaml"), "apiregistration.k8s.io/v1beta1"),
    )
    assert found.message.endswith(
        "a cluster of 1.30 serves apiregistration.k8s.io/v1 APIService, and the chart renders "
        "that there. Add apiregistration.k8s.io/v1 to `api_versions` (or `--api-versions`) to "
        "review what it gets."
    )
    config = AT_1_30 + "api_versions: [apiregistration.k8s.io/v1]\n"
    assert review_pr(tmp_path / "told", chart({}), head, "kube", config) == []
