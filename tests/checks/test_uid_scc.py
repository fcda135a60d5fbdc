"""The SCC model read straight from rendered objects: strategies, grants, and junk a render may hold."""

from __future__ import annotations

from typing import Any

import pytest

from bot.model.manifests import Document
from checks.uid.access import ServiceAccount, granted
from checks.uid.admission import admit
from checks.uid.scc import UidStrategy

WEB = ServiceAccount("apps", "web")


def doc(kind: str, name: str, body: dict[str, Any], namespace: str = "apps") -> Document:
    return Document(kind, name, namespace, "app/templates/x.yaml", {"kind": kind, **body})


@pytest.mark.parametrize(
    ("strategy", "uid", "admitted"),
    [
        (UidStrategy("RunAsAny"), 0, True),
        (UidStrategy("MustRunAsNonRoot"), 0, False),
        (UidStrategy("MustRunAsNonRoot"), 1000, True),
        (UidStrategy("MustRunAs", uid=1000), 1000, True),
        (UidStrategy("MustRunAs", uid=1000), 1001, False),
        (UidStrategy("MustRunAs", low=1000, high=1010), 1010, True),
        (UidStrategy("MustRunAsRange", low=1000, high=1010), 999, False),
        (UidStrategy("MustRunAsRange"), 1000, False),  # the namespace's range: unknowable
        (UidStrategy("MustRunAsNonRoot"), "1000", False),  # no UID the API server takes
        (UidStrategy("MustRunAsNonRoot"), True, False),
    ],
)
def test_a_strategy_admits_what_openshift_admits(
    strategy: UidStrategy, uid: object, admitted: bool
) -> None:
    assert strategy.admits(uid) is admitted


def test_a_rule_naming_no_scc_grants_every_one_even_openshift_s_own() -> None:
    docs = (
        doc(
            "ClusterRole",
            "all-sccs",
            {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["use"]}]},
        ),
        doc(
            "RoleBinding",
            "web-all-sccs",
            {
                "roleRef": {"kind": "ClusterRole", "name": "all-sccs"},
                "subjects": [{"kind": "ServiceAccount", "name": "web"}],  # the binding's namespace
            },
        ),
    )
    assert granted(docs, WEB).every
    admission = admit(docs, WEB, [0])
    assert (admission.scc, admission.applies) == ("anyuid", "anyuid")  # priority 10 goes first


def test_junk_in_rendered_rbac_and_sccs_grants_nothing_and_breaks_nothing() -> None:
    docs = (
        doc(
            "SecurityContextConstraints",
            "odd",
            {"runAsUser": "RunAsAny", "users": "web", "priority": "high"},
        ),
        doc("Role", "odd", {"rules": ["use", {"verbs": "use"}]}),
        doc(
            "RoleBinding",
            "odd",
            {"roleRef": {"kind": "Role", "name": "odd"}, "subjects": ["web", {"name": ["web"]}]},
        ),
        doc(
            "ClusterRoleBinding",
            "odd",
            {
                "roleRef": {"kind": "Role", "name": "odd"},
                "subjects": [{"kind": "Group", "name": "system:authenticated"}],
            },
        ),
    )
    admission = admit(docs, WEB, [1000])
    assert (admission.scc, admission.refusals) == (
        None,
        ("SCC odd is not granted to it",),
    )
