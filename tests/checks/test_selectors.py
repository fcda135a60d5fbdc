"""The selectors check: Services, budgets, policies, workloads and kubectl scripts that select
nothing; and Services that start publishing pods that are not Ready.

Two PRs are reviewed end to end (git, Helm, the engine), one of them a subchart's pods that only
Helm renders; the other cases run the check on a context from the same files
(tests/support/check_context.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.model.report import Finding, Severity
from checks.selectors.labels import (
    EXISTS,
    IN,
    NOT_EXISTS,
    NOT_IN,
    Pod,
    PodIndex,
    Requirement,
    parse_selector,
    selected,
)
from checks.selectors.scripts import POD, kubectl_selectors
from tests.support.check_context import review_files
from tests.support.pr_review import chart, line_of, review_pr, template

DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-jobs-manager
      labels:
        app.kubernetes.io/name: jobs-manager
    spec:
      selector:
        matchLabels:
          app: %(selector)s
      template:
        metadata:
          labels:
            app: manager
            tier: backend
        spec:
          containers:
            - name: jobs-manager
              image: example/jobs-manager:1
    """
SERVICE = """\
    apiVersion: v1
    kind: Service
    metadata:
      name: {{ .Release.Name }}-jobs-manager
    spec:
      %(extra)s
      selector:
        app: %(app)s
      ports:
        - port: 80
    """
SVC = "Service/default/release-jobs-manager"
JM = "Deployment/default/release-jobs-manager"


def files(app: str = "manager", selector: str = "manager", extra: str = "", **more: str) -> dict:
    templates = {
        "deployment.yaml": DEPLOYMENT % {"selector": selector},
        "service.yaml": SERVICE % {"app": app, "extra": extra},
        **more,
    }
    return chart(templates, {"aks": "{}\n", "eks": "{}\n"})


def test_a_service_selecting_no_pod_fails_and_names_what_the_pods_carry(tmp_path: Path) -> None:
    head = files(app="jobs-manager")
    path = template("service.yaml")
    assert review_pr(tmp_path, files(), head, "selectors") == [
        Finding(
            check="selectors",
            severity=Severity.FAILURE,
            rule="selects-nothing",
            title=f"{SVC}: spec.selector selects no pod on aks, eks",
            message=(
                f"profiles aks, eks: {SVC}: spec.selector app=jobs-manager matches no pod "
                "rendered in namespace default: pods of Deployment release-jobs-manager carry "
                "app=manager; the Service has no endpoints."
            ),
            chart="app",
            profile="aks, eks",
            subject=SVC,
            path=path,
            line=line_of(head, path, "app: jobs-manager"),
            data={
                "container": None,
                "detail": "spec.selector app=jobs-manager",
                "profiles": ["aks", "eks"],
                "selector": "app=jobs-manager",
                "hints": ["pods of Deployment release-jobs-manager carry app=manager"],
            },
        )
    ]


def test_a_service_selecting_its_pods_is_fine() -> None:
    assert review_files(files(app="jobs-manager"), files(), "selectors") == []


STATEFULSET = """\
    apiVersion: apps/v1
    kind: StatefulSet
    metadata:
      name: {{ .Release.Name }}-ingester
    spec:
      replicas: 2
      serviceName: ingester
      selector:
        matchLabels:
          app: ingester
      template:
        metadata:
          labels:
            app: ingester
        spec:
          containers:
            - name: ingester
              image: example/ingester:1
    ---
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: {{ .Release.Name }}-migrate
    spec:
      template:
        metadata:
          labels:
            app: migrate
        spec:
          restartPolicy: Never
          containers:
            - name: migrate
              image: example/migrate:1
    """
PER_POD = """\
    apiVersion: v1
    kind: Service
    metadata:
      name: {{ .Release.Name }}-ingester-%(ordinal)s
    spec:
      selector:
        app: ingester
        statefulset.kubernetes.io/pod-name: {{ .Release.Name }}-ingester-%(ordinal)s
      ports:
        - port: 80
    """


def test_labels_controllers_add_to_their_pods_are_selected() -> None:
    """Found on a public repository (issue 38): a Service per StatefulSet pod, selecting it by the
    `statefulset.kubernetes.io/pod-name` its controller gives it, was said to select nothing. A
    Job's pods carry `job-name`; a label only the running controller gives a value (a template
    hash) cannot be judged, and is not."""
    job_service = SERVICE.replace("app: %(app)s", "job-name: {{ .Release.Name }}-migrate")
    hashed = SERVICE.replace("app: %(app)s", "app: ingester\n        pod-template-hash: abc")
    templates = {
        "statefulset.yaml": STATEFULSET,
        "per-pod-0.yaml": PER_POD % {"ordinal": "0"},
        "per-pod-1.yaml": PER_POD % {"ordinal": "1"},
        "job-service.yaml": job_service % {"extra": ""},
        "hashed.yaml": hashed.replace("jobs-manager", "hashed") % {"extra": ""},
    }
    head = chart(templates, {"aks": "{}\n"})
    assert (
        review_files(
            chart({"statefulset.yaml": STATEFULSET}, {"aks": "{}\n"}),
            head,
            "selectors",
        )
        == []
    )
    # An ordinal past the replicas is no pod.
    head = chart({**templates, "per-pod-2.yaml": PER_POD % {"ordinal": "2"}}, {"aks": "{}\n"})
    [found] = review_files(
        chart({"statefulset.yaml": STATEFULSET}, {"aks": "{}\n"}), head, "selectors"
    )
    assert (found.rule, found.subject) == ("selects-nothing", "Service/default/release-ingester-2")
    assert (
        "pods of StatefulSet release-ingester carry statefulset.kubernetes.io/pod-name=release-ingester-1"
        in found.message
    )


def test_a_service_selecting_pods_of_a_rendered_subchart_is_fine(tmp_path: Path) -> None:
    sub = {
        "app/charts/db/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\n",
        "app/charts/db/templates/db.yaml": (DEPLOYMENT % {"selector": "db"}).replace(
            "app: manager", "app: db"
        ),
    }
    head = {**files(app="db"), **sub}
    assert review_pr(tmp_path, files(), head, "selectors") == []


POLICIES = """\
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: jobs-manager
    spec:
      minAvailable: 1
      selector:
        matchExpressions:
          - {key: tier, operator: %(op)s, values: [backend]}
          - {key: canary, operator: DoesNotExist}
    ---
    apiVersion: networking.k8s.io/v1
    kind: NetworkPolicy
    metadata:
      name: jobs-manager
    spec:
      podSelector:
        %(pod_selector)s
    """


def policies(op: str = "In", pod_selector: str = "{}") -> dict[str, str]:
    return {"policies.yaml": POLICIES % {"op": op, "pod_selector": pod_selector}}


def test_a_budget_and_a_policy_selecting_nothing_fail() -> None:
    component = "matchLabels:\n          app.kubernetes.io/component: worker"
    head = files(**policies(op="NotIn", pod_selector=component))
    found = review_files(files(**policies()), head, "selectors")
    path = template("policies.yaml")
    assert [(f.severity, f.rule, f.subject, f.line, f.data["hints"]) for f in found] == [
        (
            Severity.FAILURE,
            "selects-nothing",
            "NetworkPolicy/default/jobs-manager",
            line_of(head, path, "app.kubernetes.io/component: worker"),
            ["no pod carries app.kubernetes.io/component"],
        ),
        (
            Severity.FAILURE,
            "selects-nothing",
            "PodDisruptionBudget/default/jobs-manager",
            line_of(head, path, "selector:"),
            ["pods of Deployment release-jobs-manager carry tier=backend"],
        ),
    ]


def test_an_empty_pod_selector_and_matching_expressions_are_fine() -> None:
    assert review_files(files(), files(**policies()), "selectors") == []


def test_a_workload_whose_selector_misses_its_own_template_fails() -> None:
    head = files(selector="jobs-manager")
    (found,) = review_files(files(), head, "selectors")
    assert (found.severity, found.rule, found.subject, found.line) == (
        Severity.FAILURE,
        "selects-nothing",
        JM,
        line_of(head, template("deployment.yaml"), "app: jobs-manager"),
    )
    assert found.message == (
        f"profiles aks, eks: {JM}: spec.selector app=jobs-manager matches its own pod template: "
        "pods of Deployment release-jobs-manager carry app=manager; the API server rejects the "
        "workload (selector does not match template labels)."
    )


SCRIPT = """\
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: restart-script
    data:
      restart.sh: |
        #!/bin/sh
        kubectl delete pod -l %(selector)s --wait=false
    """
CLEANUP = """\
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: cleanup
    spec:
      schedule: "0 3 * * *"
      jobTemplate:
        spec:
          template:
            spec:
              restartPolicy: OnFailure
              containers:
                - name: cleanup
                  image: bitnami/kubectl:1.30
                  command: ["sh", "-c", "kubectl rollout restart deploy -l %(selector)s"]
    """


def test_a_script_selector_matching_no_pod_warns_naming_their_labels() -> None:
    head = files(
        **{"script.yaml": SCRIPT % {"selector": "app=manager,app.kubernetes.io/component=worker"}}
    )
    (found,) = review_files(files(), head, "selectors")
    assert (found.severity, found.rule, found.subject, found.line) == (
        Severity.WARNING,
        "script-selector",
        "ConfigMap/default/restart-script",
        line_of(head, template("script.yaml"), "kubectl delete pod"),
    )
    assert found.message == (
        "profiles aks, eks: ConfigMap/default/restart-script: the kubectl selector "
        "`app=manager,app.kubernetes.io/component=worker` in data key restart.sh matches no pod "
        "rendered in namespace default: no pod carries app.kubernetes.io/component; it most "
        "plausibly means the pods of Deployment release-jobs-manager (it meets 1 of the "
        "selector's 2 requirements), which carry `app: manager`, `tier: backend`. The command "
        "would act on nothing."
    )


def test_a_script_selector_matching_pods_is_fine() -> None:
    head = files(**{"script.yaml": SCRIPT % {"selector": "app=manager,tier=backend"}})
    assert review_files(files(), head, "selectors") == []


def test_a_cronjob_selecting_deployments_by_their_own_labels() -> None:
    wrong = files(**{"cleanup.yaml": CLEANUP % {"selector": "app.kubernetes.io/name=jobs"}})
    right = files(**{"cleanup.yaml": CLEANUP % {"selector": "app.kubernetes.io/name=jobs-manager"}})
    (found,) = review_files(files(), wrong, "selectors")
    assert (found.severity, found.subject, found.data["container"], found.data["hints"]) == (
        Severity.WARNING,
        "CronJob/default/cleanup",
        "container cleanup",
        ["Deployment release-jobs-manager carries app.kubernetes.io/name=jobs-manager"],
    )
    assert review_files(files(), right, "selectors") == []


def test_publish_not_ready_addresses_turned_on_is_a_notice() -> None:
    head = files(extra="publishNotReadyAddresses: true")
    (found,) = review_files(files(), head, "selectors")
    assert (found.severity, found.rule, found.subject, found.profile, found.line) == (
        Severity.NOTICE,
        "publish-not-ready",
        SVC,
        "aks, eks",
        line_of(head, template("service.yaml"), "publishNotReadyAddresses"),
    )
    assert review_files(head, head, "selectors") == []


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("app=a,tier!=b", (Requirement("app", IN, ("a",)), Requirement("tier", NOT_IN, ("b",)))),
        (
            "app in (a, b),!canary",
            (Requirement("app", IN, ("a", "b")), Requirement("canary", NOT_EXISTS)),
        ),
        ("app notin (a),track", (Requirement("app", NOT_IN, ("a",)), Requirement("track", EXISTS))),
        ("app=$APP", None),
    ],
)
def test_kubectl_selector_syntax(text: str, parsed: tuple[Requirement, ...] | None) -> None:
    assert parse_selector(text) == parsed


def test_kubectl_commands_in_a_script() -> None:
    script = (
        "kubectl get pods -n jobs -l 'app in (a,b)' -o name | xargs ls -l\n"
        "kubectl logs --selector=app=c --tail 5 && echo -l x=y\n"
        "kubectl get widgets -l app=d\n"
        "kubectl -n $NS delete po -lapp=e\n"
    )
    found = [(s.text, s.namespace, s.all_namespaces, s.kinds) for s in kubectl_selectors(script)]
    assert found == [
        ("app in (a,b)", "jobs", False, frozenset({POD})),
        ("app=c", None, False, frozenset({POD})),
        ("app=e", None, True, frozenset({POD})),
    ]


def test_a_kubectl_command_inside_a_quoted_string_is_still_a_selector() -> None:
    # A script that prints the command it suggests: the closing quote must not eat the selector.
    script = (
        'log "    kubectl get pods -l app.kubernetes.io/component=jobs-manager"\n'
        "echo 'run: kubectl logs -l app=a' && kubectl delete pod -l \"app=b\"\n"
        'printf "%s\\n" "escaped \\"quote\\" kubectl get po -l app=c"\n'
    )
    assert [(s.text, s.kinds) for s in kubectl_selectors(script)] == [
        ("app.kubernetes.io/component=jobs-manager", frozenset({POD})),
        ("app=a", frozenset({POD})),
        ("app=b", frozenset({POD})),
        ("app=c", frozenset({POD})),
    ]


PODS = [
    Pod("Deployment", "web", "default", {"app": "web", "tier": "front"}),
    Pod("Deployment", "api", "default", {"app": "api"}),
    Pod("Deployment", "web", "other", {"app": "web"}),
]


@pytest.mark.parametrize(
    ("text", "namespace"),
    [
        ("app=web,tier=front", "default"),
        ("app=web,tier=back", "default"),
        ("app in (api,web)", "default"),
        ("app=web,tier=front", "other"),
        ("app!=web", "default"),
        ("!tier", "other"),
        ("tier", "nowhere"),
    ],
)
def test_the_pod_index_selects_what_trying_every_pod_selects(text: str, namespace: str) -> None:
    selector = parse_selector(text)
    assert selector is not None
    in_namespace = [p for p in PODS if p.namespace == namespace]
    index = PodIndex(PODS)
    assert index.in_namespace(namespace) == in_namespace
    assert index.selects_any(selector, namespace) == bool(selected(selector, in_namespace))
