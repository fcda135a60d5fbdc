"""The comments check: a comment in the block that defines a workload or container that still
names a value the PR changed. Synthetic charts after the real pattern: two PRs reviewed by the
engine end to end (one of them a template comment, which only Helm drops), the other cases on a
context from the same files (tests/support/check_context.py)."""

from __future__ import annotations

from pathlib import Path

from bot.model.report import Finding, Severity
from tests.support.check_context import review_files
from tests.support.pr_review import chart, line_of, review_pr, template

API = "Deployment/default/release-api"
TEMPLATE = template("api.yaml")
DEPLOYMENT = """\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: {{ .Release.Name }}-api
    spec:
      strategy:
        # Recreate: two versions must never share the database.
        type: %(strategy)s
      selector:
        matchLabels:
          app: api
      template:
        metadata:
          labels:
            app: api
        spec:
          containers:
            # The API serves on 8080 and is probed there.
            - name: api
              image: example/api:1
              ports:
                - name: http
                  containerPort: %(port)s
              securityContext:
                # runs as 1000, the image's own user
                runAsUser: %(uid)s
              # A TCP connect is the right signal: tcpSocket passes as soon as the port is bound,
              # before the caches are warm, which is what we want for liveness.
              livenessProbe:
                %(probe)s
            - name: sidecar
              image: example/sidecar:1
              %(sidecar)s
    """
TCP = "tcpSocket: {port: http}"
HTTP = "httpGet: {path: /healthz, port: http}"
PROFILES = {"aks": "{}\n", "eks": "{}\n"}


def files(
    probe: str = TCP,
    port: str = "8080",
    uid: str = "1000",
    strategy: str = "Recreate",
    sidecar: str = "",
    text: str = DEPLOYMENT,
) -> dict[str, str]:
    values = {"probe": probe, "port": port, "uid": uid, "strategy": strategy, "sidecar": sidecar}
    return chart({"api.yaml": text % values}, PROFILES)


def comments(base: dict[str, str], head: dict[str, str]) -> list[Finding]:
    """The comments check's findings on a context from the files (tests/support/check_context.py)."""
    return review_files(base, head, "comments")


def test_a_probe_moved_to_httpget_under_a_comment_still_explaining_tcp(tmp_path: Path) -> None:
    head = files(probe=HTTP)
    comment = line_of(head, TEMPLATE, "tcpSocket passes")
    changed = line_of(head, TEMPLATE, "httpGet:")
    assert review_pr(tmp_path, files(), head, "comments") == [
        Finding(
            check="comments",
            severity=Severity.NOTICE,
            rule="stale-comment",
            title=f"{TEMPLATE} line {comment}: the comment still says tcpSocket, now httpGet",
            message=(
                f"profiles aks, eks: {API}: the PR changed the liveness probe handler of container "
                f"api from tcpSocket to httpGet (line {changed}), but the comment on line "
                f"{comment} still says tcpSocket: “A TCP connect is the right signal: tcpSocket "
                "passes as soon as the port is bound,”. Say httpGet there, or why tcpSocket still "
                "holds."
            ),
            chart="app",
            profile="aks, eks",
            subject=API,
            path=TEMPLATE,
            line=comment,
            data={
                "comment_line": comment,
                "changed_line": changed,
                "field": "liveness probe handler",
                "container": "api",
                "old": "tcpSocket",
                "new": "httpGet",
                "profiles": ["aks", "eks"],
            },
        )
    ]


def test_a_comment_the_pr_updated_is_not_stale() -> None:
    updated = DEPLOYMENT.replace(
        "A TCP connect is the right signal: tcpSocket passes as soon as the port is bound,",
        "An HTTP check of /healthz: it passes once the caches are warm,",
    )
    assert comments(files(), files(probe=HTTP, text=updated)) == []


def test_a_comment_naming_both_values_is_not_stale() -> None:
    both = DEPLOYMENT.replace("tcpSocket passes", "httpGet replaced tcpSocket, which passed")
    assert comments(files(text=both), files(probe=HTTP, text=both)) == []


def test_the_old_handler_still_rendered_in_the_container_keeps_the_comment_true() -> None:
    readiness = "readinessProbe:\n                tcpSocket: {port: http}"
    text = DEPLOYMENT.replace(
        "              livenessProbe:", f"              {readiness}\n              livenessProbe:"
    )
    assert comments(files(text=text), files(probe=HTTP, text=text)) == []


def test_the_old_value_in_another_container_s_block_is_not_its_comment() -> None:
    """The sidecar's probe moves; the tcpSocket comment is in the api container's block."""
    base = files(sidecar="livenessProbe:\n                tcpSocket: {port: 9000}")
    head = files(sidecar="livenessProbe:\n                httpGet: {path: /, port: 9000}")
    assert comments(base, head) == []


def test_a_port_named_near_its_field() -> None:
    head = files(port="9090")
    (found,) = comments(files(), head)
    assert (found.line, found.data["old"], found.data["new"], found.data["field"]) == (
        line_of(head, TEMPLATE, "serves on 8080"),
        "8080",
        "9090",
        "containerPort http",
    )
    assert found.data["changed_line"] == line_of(head, TEMPLATE, "containerPort:")


def test_a_uid_and_a_strategy_type() -> None:
    head = files(uid="2000", strategy="RollingUpdate")
    found = {(f.data["field"], f.data["old"], f.line) for f in comments(files(), head)}
    assert found == {
        ("runAsUser", "1000", line_of(head, TEMPLATE, "runs as 1000")),
        ("strategy type", "Recreate", line_of(head, TEMPLATE, "# Recreate")),
    }


def test_a_number_far_from_its_field_and_not_naming_it_is_left_alone() -> None:
    text = DEPLOYMENT.replace("# runs as 1000, the image's own user", "# see the image docs")
    text = text.replace("  ports:\n", "  # at most 1000 connections\n              ports:\n", 1)
    assert "# at most 1000 connections\n              ports:" in text
    assert comments(files(text=text), files(uid="2000", text=text)) == []


def test_a_number_anywhere_in_the_block_counts_when_the_comment_names_the_field() -> None:
    text = DEPLOYMENT.replace("# runs as 1000, the image's own user", "# see the image docs")
    text = text.replace(
        "  ports:\n", "  # runAsUser 1000 is the image's\n              ports:\n", 1
    )
    head = files(uid="2000", text=text)
    (found,) = comments(files(text=text), head)
    assert (found.line, found.data["changed_line"]) == (
        line_of(head, TEMPLATE, "# runAsUser 1000"),
        line_of(head, TEMPLATE, "runAsUser: 2000"),
    )


def test_a_template_comment_spanning_lines(tmp_path: Path) -> None:
    # A template comment is Helm's to drop: reviewed end to end.
    text = DEPLOYMENT.replace(
        "# A TCP connect is the right signal: tcpSocket passes as soon as the port is bound,\n"
        "              # before the caches are warm, which is what we want for liveness.",
        "{{- /* Liveness is a TCP connect:\n"
        "                     a tcpSocket check, on purpose. */}}",
    )
    head = files(probe=HTTP, text=text)
    (found,) = review_pr(tmp_path, files(text=text), head, "comments")
    assert (found.line, found.data["old"]) == (
        line_of(head, TEMPLATE, "a tcpSocket check"),
        "tcpSocket",
    )


def test_a_resources_value_in_a_trailing_comment() -> None:
    limits = "resources:\n                limits: {memory: %s}  # 512Mi: the heap plus headroom"
    head = files(sidecar=limits % "1Gi")
    (found,) = comments(files(sidecar=limits % "512Mi"), head)
    assert (found.line, found.data["container"], found.data["field"], found.data["new"]) == (
        line_of(head, TEMPLATE, "the heap plus headroom"),
        "sidecar",
        "memory limits",
        "1Gi",
    )
