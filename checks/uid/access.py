"""Which SCCs a pod's service account may use, from what the chart renders: an SCC naming it (its
`users` or `groups`), or RBAC granting the `use` verb on it, as OpenShift's SCC admission asks.

RBAC the cluster holds apart from the chart is unknown here; only the ClusterRoles OpenShift ships
for its own SCCs (`system:openshift:scc:anyuid`, ...) are taken as existing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bot.model.manifests import Document
from checks.uid.scc import BUILTIN, BUILTIN_ROLE_PREFIX, Scc, string_set

SCC_GROUP = "security.openshift.io"
SCC_RESOURCE = "securitycontextconstraints"
USE = "use"
ANY = "*"
DEFAULT_ACCOUNT = "default"
# The role kinds each binding kind may refer to.
_BINDINGS = {"RoleBinding": ("Role", "ClusterRole"), "ClusterRoleBinding": ("ClusterRole",)}
_RoleKey = tuple[str, str, str]  # (kind, namespace or "" when cluster-scoped, name)


@dataclass(frozen=True)
class ServiceAccount:
    namespace: str
    name: str

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.name}"

    @property
    def groups(self) -> frozenset[str]:
        """The groups the API server puts every service account's requests in."""
        ns = f"system:serviceaccounts:{self.namespace}"
        return frozenset({"system:serviceaccounts", ns, "system:authenticated"})

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Grants:
    """The SCC names RBAC lets an account `use`; `every` when a rule names none (all SCCs)."""

    names: frozenset[str] = frozenset()
    every: bool = False

    def covers(self, name: str) -> bool:
        return self.every or name in self.names


def pod_account(doc: Document, spec: Mapping[str, Any]) -> ServiceAccount:
    """The pod's service account, `default` when unset, in the workload's namespace."""
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    return ServiceAccount(doc.namespace, name if isinstance(name, str) else DEFAULT_ACCOUNT)


def may_use(scc: Scc, account: ServiceAccount, grants: Grants) -> bool:
    return account.user in scc.users or bool(scc.groups & account.groups) or grants.covers(scc.name)


def granted(docs: tuple[Document, ...], account: ServiceAccount) -> Grants:
    """What the rendered RoleBindings and ClusterRoleBindings binding `account` grant it."""
    roles: dict[_RoleKey, Document] = {
        (d.kind, _scope(d), d.name): d for d in docs if d.kind in ("Role", "ClusterRole")
    }
    names: set[str] = set()
    every = False
    for kind, scope, name in _bound_roles(docs, account):
        role = roles.get((kind, scope, name))
        builtin = name.removeprefix(BUILTIN_ROLE_PREFIX)
        if role is None and kind == "ClusterRole" and builtin != name and builtin in BUILTIN:
            names.add(builtin)
        for rule in _list(role.body.get("rules")) if role else ():
            if _grants_use(rule):
                scc_names = string_set(rule.get("resourceNames"))
                every = every or not scc_names
                names.update(scc_names)
    return Grants(frozenset(names), every)


def _scope(doc: Document) -> str:
    return doc.namespace if doc.kind in ("Role", "RoleBinding") else ""


def _bound_roles(docs: tuple[Document, ...], account: ServiceAccount) -> Iterator[_RoleKey]:
    """Each role bound to `account` where its pods run: a RoleBinding counts only in the account's
    namespace, as SCC admission asks in the pod's namespace."""
    for doc in docs:
        if doc.kind not in _BINDINGS or _scope(doc) not in ("", account.namespace):
            continue
        ref = doc.body.get("roleRef")
        if not isinstance(ref, dict) or not isinstance(ref.get("name"), str):
            continue
        kind = ref.get("kind")
        if kind not in _BINDINGS[doc.kind]:
            continue  # a ClusterRoleBinding cannot bind a Role
        if any(_names(s, account, _scope(doc)) for s in _list(doc.body.get("subjects"))):
            yield kind, (_scope(doc) if kind == "Role" else ""), ref["name"]


def _names(subject: Any, account: ServiceAccount, binding_ns: str) -> bool:
    if not isinstance(subject, dict) or not isinstance(subject.get("name"), str):
        return False
    kind, name = subject.get("kind"), subject["name"]
    if kind == "ServiceAccount":
        # A RoleBinding's ServiceAccount subject without a namespace is in the binding's.
        namespace = subject.get("namespace") or binding_ns
        return name == account.name and namespace == account.namespace
    if kind == "Group":
        return name in account.groups
    return kind == "User" and name == account.user


def _grants_use(rule: Any) -> bool:
    return (
        isinstance(rule, dict)
        and bool({SCC_GROUP, ANY} & string_set(rule.get("apiGroups")))
        and bool({SCC_RESOURCE, ANY} & string_set(rule.get("resources")))
        and bool({USE, ANY} & string_set(rule.get("verbs")))
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
