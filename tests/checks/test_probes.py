"""The probes check: probes that cannot succeed, probes the config forbids, and probe changes.

The first test reviews its PR end to end (git, Helm, the engine); the others run the check on a
context built from the same files (tests/support/check_context.py), in milliseconds."""

from __future__ import annotations

from pathlib import Path

from bot.model.report import Finding, Origin, Severity
from tests.support.check_context import review_files
from tests.support.pr_review import chart, line_of, review_pr, template

JM = "Deployment/default/release-jobs-manager"
TEMPLATE = template("jobs-manager.yaml")
DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-jobs-manager
    spec:
      selector:
        matchLabels:
          app: jobs-manager
      template:
        metadata:
          labels:
            app: jobs-manager
        spec:
          containers:
            - name: sidecar
              image: example/sidecar:1
            - name: jobs-manager
              image: example/jobs-manager:1
              ports:
                - name: http
                  containerPort: %(port)s
              env:
                - name: MYSQL_HOST
                  value: mysql
                - name: MYSQL_PORT
                  value: "3306"
                %(env)s
              %(probes)s
              %(extra)s
    """
HTTP = "httpGet: {path: /healthz, port: http}"
NO_PROBE = ""
PROFILES = {"aks": "{}\n", "eks": "{}\n"}
FORBID = """\
    probes:
      forbid:
        "Deployment/*jobs-manager*": [liveness, startup]
    """


def files(
    readiness: str = HTTP, port: str = "8080", env: str = "", extra: str = ""
) -> dict[str, str]:
    probes = f"readinessProbe:\n                {readiness}" if readiness else ""
    text = DEPLOYMENT % {"probes": probes, "port": port, "env": env, "extra": extra}
    return chart({"jobs-manager.yaml": text}, PROFILES)


def test_a_probe_on_a_port_name_no_container_declares_fails(tmp_path: Path) -> None:
    head = files(readiness="httpGet: {path: /healthz, port: web}")
    assert review_pr(tmp_path, files(readiness=NO_PROBE), head, "probes") == [
        Finding(
            check="probes",
            severity=Severity.FAILURE,
            rule="probe-port",
            title=f"{JM}: container jobs-manager readiness probe port web is not a containerPort "
            "on aks, eks",
            message=(
                f"profiles aks, eks: {JM}: the readiness probe of container jobs-manager checks "
                "port web, which matches no containerPort of container jobs-manager (declared: "
                "8080 (http)): it cannot succeed, and the pod never becomes Ready."
            ),
            chart="app",
            profile="aks, eks",
            subject=JM,
            path=TEMPLATE,
            line=line_of(head, TEMPLATE, "readinessProbe:"),
            origin=Origin(
                TEMPLATE,
                line_of(head, TEMPLATE, "readinessProbe:"),
                JM,
                ("containers", 1, "readinessProbe", "httpGet", "port"),
            ),
            data={
                "container": "jobs-manager",
                "detail": "readiness port web",
                "profiles": ["aks", "eks"],
                "probe": "readiness",
                "port": "web",
            },
        )
    ]


def test_a_named_probe_port_matching_a_named_container_port_is_fine() -> None:
    assert review_files(files(readiness=NO_PROBE), files(), "probes") == []


def test_a_numeric_probe_port_no_container_port_declares_is_a_notice() -> None:
    # Kubernetes does not require it: an OpenTelemetry collector's health check on 13133 works.
    head = files(readiness="tcpSocket: {port: 9090}", extra="livenessProbe: {grpc: {port: 8080}}")
    found = review_files(files(readiness=NO_PROBE), head, "probes")
    # the grpc probe on 8080 is fine
    assert [(f.severity, f.rule, f.data["detail"], f.line) for f in found] == [
        (
            Severity.NOTICE,
            "probe-port-undeclared",
            "readiness port 9090",
            line_of(head, TEMPLATE, "readinessProbe:"),
        ),
    ]


def test_a_probe_moved_off_its_declared_port_to_an_undeclared_number_warns() -> None:
    """Issue 38: a PR moves a probe from the port its container declares to a number none declares;
    Kubernetes accepts it (not a failure), but it is likelier a slip than a listener."""
    head = files(readiness="tcpSocket: {port: 9090}", extra="livenessProbe: {grpc: {port: 8080}}")
    found = review_files(files(readiness="tcpSocket: {port: 8080}"), head, "probes")
    # the port change needs no notice beside this one
    [moved] = found
    assert (moved.severity, moved.rule, moved.data["detail"], moved.data["was"], moved.line) == (
        Severity.WARNING,
        "probe-port-moved-undeclared",
        "readiness port 9090",
        8080,
        line_of(head, TEMPLATE, "readinessProbe:"),
    )
    assert moved.message == (
        f"profiles aks, eks: {JM}: the readiness probe of container jobs-manager checked port "
        "8080, which its container declares, and now checks 9090, which no containerPort of "
        "container jobs-manager declares (declared: 8080 (http)). Kubernetes accepts it, so this "
        "is fine if the app listens on 9090; if it does not, the pod never becomes Ready."
    )
    # Already at base, it is no change of the PR's: a notice, folded.
    env = '- name: MODE\n                  value: "quiet"'
    again = files(
        readiness="tcpSocket: {port: 9090}", extra="livenessProbe: {grpc: {port: 8080}}", env=env
    )
    [kept] = review_files(head, again, "probes")
    assert (kept.severity, kept.rule) == (Severity.NOTICE, "probe-port-undeclared")
    assert kept.preexisting is True


def test_a_named_probe_port_no_container_port_carries_fails() -> None:
    head = files(readiness="httpGet: {path: /healthz, port: metrics}")
    (found,) = review_files(files(readiness="tcpSocket: {port: http}"), head, "probes")
    assert (found.severity, found.rule, found.data["detail"], found.line) == (
        Severity.FAILURE,
        "probe-port",
        "readiness port metrics",
        line_of(head, TEMPLATE, "readinessProbe:"),
    )
    assert "readiness probe port metrics is not a containerPort" in found.title


def test_an_env_port_the_probe_ignores_warns() -> None:
    env = '- name: INGESTION_HTTP_PORT\n                  value: "9090"'
    head = files(env=env)
    (found,) = review_files(files(), head, "probes")
    assert (found.severity, found.rule, found.subject, found.line, found.profile) == (
        Severity.WARNING,
        "env-port",
        JM,
        line_of(head, TEMPLATE, "name: INGESTION_HTTP_PORT"),
        "aks, eks",
    )
    assert found.message == (
        f"profiles aks, eks: {JM}: container jobs-manager sets INGESTION_HTTP_PORT=9090, but its "
        "readiness probe checks port 8080 and no containerPort is 9090 (declared: 8080 (http)): "
        "if the app listens on INGESTION_HTTP_PORT, the probe cannot succeed."
    )


def test_an_env_port_that_is_declared_and_probed_is_fine() -> None:
    env = '- name: INGESTION_HTTP_PORT\n                  value: "9090"'
    assert review_files(files(), files(env=env, port="9090"), "probes") == []


def test_adding_a_forbidden_probe_kind_fails() -> None:
    head = files(extra="livenessProbe:\n                httpGet: {path: /healthz, port: http}")
    (found,) = review_files(files(), head, "probes", FORBID)
    assert (found.severity, found.rule, found.title, found.line) == (
        Severity.FAILURE,
        "forbidden-probe",
        f"{JM}: container jobs-manager has a liveness probe, which config forbids on aks, eks",
        line_of(head, TEMPLATE, "livenessProbe:"),
    )
    assert found.message == (
        f"profiles aks, eks: {JM}: container jobs-manager has a liveness probe; `probes.forbid` "
        "in the config forbids liveness probes on Deployment/*jobs-manager*."
    )


def test_a_permitted_probe_kind_is_fine() -> None:
    base = files(readiness="tcpSocket: {port: http}")
    assert review_files(base, base, "probes", FORBID) == []


def test_a_forbidden_probe_present_at_base_is_one_notice() -> None:
    base = files(extra="startupProbe: {tcpSocket: {port: http}}")
    head = files(extra="startupProbe: {tcpSocket: {port: http}, failureThreshold: 30}")
    (found,) = review_files(base, head, "probes", FORBID)
    assert (found.severity, found.rule, found.profile, found.preexisting) == (
        Severity.NOTICE,
        "forbidden-probe",
        "aks, eks",
        True,
    )


def test_a_probe_switched_from_tcp_to_http_is_a_notice_listing_the_change() -> None:
    base = files(readiness="tcpSocket: {port: 8080}\n                timeoutSeconds: 1")
    head = files(readiness=HTTP + "\n                timeoutSeconds: 5")
    (found,) = review_files(base, head, "probes")
    assert (found.severity, found.rule, found.line) == (
        Severity.NOTICE,
        "probe-changed",
        line_of(head, TEMPLATE, "readinessProbe:"),
    )
    assert found.message == (
        f"profiles aks, eks: {JM}: the readiness probe of container jobs-manager changed: "
        "tcpSocket → httpGet; path (unset) → /healthz; port 8080 → http; timeoutSeconds 1 → 5."
    )


def test_an_unchanged_probe_says_nothing() -> None:
    assert review_files(files(), files(env="- {name: LOG_LEVEL, value: debug}"), "probes") == []


def test_a_numeric_probe_port_on_a_container_declaring_no_ports_is_left_alone() -> None:
    # containerPort is informational: without any, nothing says the app does not listen there
    sidecar = "image: example/sidecar:1"
    probe = "\n          readinessProbe: {tcpSocket: {port: 15020}}"
    for ports in ("", "\n          ports: [{containerPort: 80}]"):
        head = files()
        head[TEMPLATE] = head[TEMPLATE].replace(sidecar, sidecar + ports + probe)
        found = review_files(files(), head, "probes")
        # the same probe beside a declared port that is not it: the check does look there
        expected = [("probe-port-undeclared", "readiness port 15020")] if ports else []
        assert [(f.rule, f.data["detail"]) for f in found] == expected
