"""The uid check models OpenShift's SCC admission: a pinned runAsUser passes when the pod's service
account may use a rendered SCC (its users or groups, or RBAC granting `use`) whose runAsUser
strategy admits the UID; otherwise restricted-v2 applies and the pin fails admission.

The cases run the check on contexts from the chart's files (tests/support/check_context.py); the
explanation, which only the engine gathers, is reviewed end to end."""

from __future__ import annotations

from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.report import Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.check_context import review_files
from tests.support.gitbuilder import GitBuilder
from tests.support.pr_review import chart, line_of, template

WEB = "Deployment/default/release-web"
SA = "system:serviceaccount:{{ .Release.Namespace }}:web"
DEPLOYMENT = """\
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
          serviceAccountName: web
          containers:
            - name: web
              image: example/web:1
              securityContext:
                runAsNonRoot: true
                %(web)s
            - name: sidecar
              image: example/sidecar:1
              securityContext:
                %(sidecar)s
    """
SCC = """\
    apiVersion: security.openshift.io/v1
    kind: SecurityContextConstraints
    metadata:
      name: {{ .Release.Name }}-scc
    runAsUser:
      %(strategy)s
    users: %(users)s
    groups: %(groups)s
    """
ROLE = """\
    apiVersion: rbac.authorization.k8s.io/v1
    kind: %(kind)s
    metadata:
      name: {{ .Release.Name }}-scc-user
    rules:
      - apiGroups: [security.openshift.io]
        resources: [securitycontextconstraints]
        verbs: [use]
        %(names)s
    """
BINDING = """\
    apiVersion: rbac.authorization.k8s.io/v1
    kind: %(kind)s
    metadata:
      name: {{ .Release.Name }}-scc-user
      %(namespace)s
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: %(role)s
      name: %(role_name)s
    subjects:
      - kind: ServiceAccount
        name: web
        namespace: {{ .Release.Namespace }}
    """
ANY = "type: RunAsAny"


def scc(strategy: str = ANY, users: str = "[]", groups: str = "[]") -> str:
    return SCC % {"strategy": strategy, "users": users, "groups": groups}


def role(kind: str = "Role", names: str = "resourceNames: [release-scc]") -> str:
    return ROLE % {"kind": kind, "names": names}


def binding(
    kind: str = "RoleBinding",
    role: str = "Role",
    role_name: str = "release-scc-user",
    namespace: str = "",
) -> str:
    return BINDING % {"kind": kind, "role": role, "role_name": role_name, "namespace": namespace}


def files(web: str = "", sidecar: str = "privileged: false", **templates: str) -> dict[str, str]:
    deployment = DEPLOYMENT % {"web": web, "sidecar": sidecar}
    return chart({"web.yaml": deployment, **templates})


def pinned(uid: str = "1000", **templates: str) -> list[tuple[Severity, str]]:
    """The uid findings of a PR that pins the web container's runAsUser to `uid`."""
    head = files(f"runAsUser: {uid}", **templates)
    found = review_files(files(**templates), head, "uid")
    return [(f.severity, f.message) for f in found]


def refused(uid: int, refusals: str, together: str = "") -> str:
    return (
        f"profile default: {WEB}: container web sets runAsUser: {uid}, but the profile renders a "
        "SecurityContextConstraints, so the platform assigns UIDs: service account default/web may "
        f"use no SCC that admits UID {uid}{together} ({refusals}), so OpenShift's restricted-v2 "
        "SCC applies and rejects a pinned UID: the pod fails admission and stays Pending. Drop "
        "runAsUser (runAsNonRoot: true is allowed), or grant the service account an SCC that "
        "admits it."
    )


def test_an_scc_whose_users_name_the_service_account_admits_the_pin() -> None:
    assert pinned(**{"scc.yaml": scc(users=f"[{SA!r}]")}) == []


def test_an_scc_granted_through_a_role_and_role_binding_admits_the_pin() -> None:
    templates = {"scc.yaml": scc(), "role.yaml": role(), "binding.yaml": binding()}
    assert pinned(**templates) == []


def test_a_group_of_the_namespace_s_service_accounts_admits_the_pin() -> None:
    groups = "['system:serviceaccounts:{{ .Release.Namespace }}']"
    assert pinned(**{"scc.yaml": scc(groups=groups)}) == []


def test_a_binding_to_openshift_s_anyuid_cluster_role_admits_the_pin() -> None:
    bound = binding(role="ClusterRole", role_name="system:openshift:scc:anyuid")
    assert pinned(**{"scc.yaml": scc(), "binding.yaml": bound}) == []


def test_an_scc_rendered_but_not_granted_to_the_service_account_fails() -> None:
    other = "['system:serviceaccount:{{ .Release.Namespace }}:other']"
    assert pinned(**{"scc.yaml": scc(users=other)}) == [
        (Severity.FAILURE, refused(1000, "SCC release-scc is not granted to it"))
    ]


def test_a_cluster_role_naming_another_scc_grants_nothing_here() -> None:
    templates = {
        "scc.yaml": scc(),
        "role.yaml": role("ClusterRole", "resourceNames: [someone-elses-scc]"),
        "binding.yaml": binding("ClusterRoleBinding", "ClusterRole"),
    }
    assert pinned(**templates) == [
        (Severity.FAILURE, refused(1000, "SCC release-scc is not granted to it"))
    ]


def test_a_role_binding_in_another_namespace_grants_nothing_here() -> None:
    templates = {
        "scc.yaml": scc(),
        "role.yaml": role("ClusterRole"),
        "binding.yaml": binding(role="ClusterRole", namespace="namespace: elsewhere"),
    }
    assert pinned(**templates) == [
        (Severity.FAILURE, refused(1000, "SCC release-scc is not granted to it"))
    ]


def test_must_run_as_another_uid_does_not_admit_the_pin() -> None:
    strategy = "type: MustRunAs\n      uid: 1001"
    assert pinned(**{"scc.yaml": scc(strategy, users=f"[{SA!r}]")}) == [
        (Severity.FAILURE, refused(1000, "SCC release-scc admits only UID 1001"))
    ]


def test_must_run_as_non_root_does_not_admit_root() -> None:
    templates = {"scc.yaml": scc("type: MustRunAsNonRoot"), "role.yaml": role()}
    templates["binding.yaml"] = binding()
    assert pinned("0", **templates) == [
        (Severity.FAILURE, refused(0, "SCC release-scc admits any UID but 0"))
    ]


def test_a_uid_range_admits_the_uids_it_holds_only() -> None:
    strategy = "type: MustRunAsRange\n      uidRangeMin: 1000\n      uidRangeMax: 1999"
    templates = {"scc.yaml": scc(strategy, users=f"[{SA!r}]")}
    assert pinned("1999", **templates) == []
    assert pinned("2000", **templates) == [
        (Severity.FAILURE, refused(2000, "SCC release-scc admits only UIDs 1000-1999"))
    ]


def test_a_range_left_to_the_namespace_admits_no_pin() -> None:
    templates = {"scc.yaml": scc("type: MustRunAsRange", users=f"[{SA!r}]")}
    assert pinned(**templates) == [
        (
            Severity.FAILURE,
            refused(1000, "SCC release-scc admits only the namespace's assigned range"),
        )
    ]


def test_one_scc_admits_the_whole_pod_so_clashing_pins_fail_together() -> None:
    """web's 1000 and the sidecar's 1001 each pass some SCC, but no one SCC admits both."""
    second = SCC.replace("-scc", "-other-scc") % {
        "strategy": "type: MustRunAs\n      uid: 1001",
        "users": f"[{SA!r}]",
        "groups": "[]",
    }
    templates = {"scc.yaml": scc("type: MustRunAs\n      uid: 1000", users=f"[{SA!r}]")}
    templates["other.yaml"] = second
    head = files("runAsUser: 1000", "runAsUser: 1001", **templates)
    found = review_files(files(**templates), head, "uid")
    assert [(f.severity, f.data["container"], f.line) for f in found] == [
        (Severity.FAILURE, "web", line_of(head, template("web.yaml"), "runAsUser: 1000")),
        (Severity.FAILURE, "sidecar", line_of(head, template("web.yaml"), "runAsUser: 1001")),
    ]
    refusals = "SCC release-other-scc admits only UID 1001; SCC release-scc admits only UID 1000"
    together = " together with the pod's other pinned UIDs"
    assert found[0].message == refused(1000, refusals, together)
    assert found[0].data["scc"] == "restricted-v2"


def test_only_the_pin_no_usable_scc_admits_is_the_culprit() -> None:
    templates = {"scc.yaml": scc("type: MustRunAs\n      uid: 1000", users=f"[{SA!r}]")}
    head = files("runAsUser: 1000", "runAsUser: 1001", **templates)
    (found,) = review_files(files(**templates), head, "uid")
    assert (found.data["container"], found.data["run_as_user"]) == ("sidecar", 1001)


def test_explain_names_the_scc_that_admits_a_pin(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    for path, text in files("runAsUser: 1000", **{"scc.yaml": scc(users=f"[{SA!r}]")}).items():
        g.write(path, text)
    g.commit("base").branch("pr")
    g.write("app/README.md", "a change to review\n").commit("the pull request")
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    result = engine.review(ReviewInput(base="develop", head="pr", only_checks=("uid",)), True)
    assert [line for line in result.explanations if line.startswith("uid:")] == [
        "uid: app profile default: checked: the profile renders a SecurityContextConstraints",
        f"uid: app profile default: {WEB}: pinned UID 1000 admitted by SCC release-scc "
        "(service account default/web)",
    ]
