"""Findings of the QoS check in a reviewer's words, pointing at the culprit's template line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from bot.git.objects import Tree
from bot.model.manifests import container_name_line
from bot.model.origin import container_origin
from bot.model.report import Finding, Origin, Severity
from bot.textlines import git_lines
from checks.kit.template_lines import container_line, key_pattern, kind_line, nested_line
from checks.qos.classes import Cause, QoSClass
from checks.qos.compare import Change, ChangeKind, PodView
from checks.qos.fix import fix_data, fix_sentence, restoring_fixes
from checks.qos.pod import ROLE_POD, BadQuantity
from checks.qos.quota import QuotaGap

CHECK = "qos"
DOWNGRADE, UPGRADE, NEW_BEST_EFFORT = "downgrade", "upgrade", "new-besteffort"
ADDED, REMOVED, RENAMED, BAD_QUANTITY, QUOTA = (
    "added",
    "removed",
    "renamed",
    "bad-quantity",
    "quota",
)
SEVERITY = {
    DOWNGRADE: Severity.FAILURE,
    UPGRADE: Severity.NOTICE,
    NEW_BEST_EFFORT: Severity.WARNING,
    ADDED: Severity.NOTICE,
    REMOVED: Severity.NOTICE,
    RENAMED: Severity.NOTICE,
}
ARROW = "→"
TITLE_CHANGE = "{key} {base} " + ARROW + " {head} on {profile}"
TITLE_ADDED = "{key} added ({head}) on {profile}"
TITLE_REMOVED = "{key} removed (was {base}) on {profile}"
TITLE_RENAMED = "{old} renamed to {new} on {profile}"
TITLE_RENAMED_CHANGE = "{old} renamed to {new}, {base} " + ARROW + " {head} on {profile}"
MSG_CHANGE = "profile {profile}: {key} {base} " + ARROW + " {head}: {why}."
MSG_RENAMED = "profile {profile}: {old} renamed to {new}, {base} " + ARROW + " {head}{why}."
MSG_ADDED = "profile {profile}: {key} added, {head}{why}."
MSG_REMOVED = "profile {profile}: {key} removed (was {base})."
MSG_PROFILE = "profile {profile} {verb}: {count} pod{s}{classes}."
TITLE_PROFILE = "profile {profile} {verb}: {count} pod{s}"
MSG_BAD = (
    "profile {profile}: {key}: {who} {field} is {value!r}, which is not a Kubernetes quantity "
    "({reason}); the API server will reject the pod."
)
TITLE_BAD = "{key}: bad quantity in {field} on {profile}"
MSG_QUOTA = (
    "profile {profile}: {key}: {who} sets no {fields}, which ResourceQuota {quotas} in namespace "
    "{namespace} requires; the API server will reject the pod.{already}"
)
TITLE_QUOTA = "{key}: {who} lacks {fields} under a ResourceQuota on {profile}"
ALREADY = " This was already so at base."
AT_BASE = "at base, "
UNKNOWN_CAUSE = "the summed requests differ from the summed limits"
RESOURCES = "resources"
# A directive that emits a container's resources: `{{- toYaml .Values.resources | nindent 12 }}`,
# `{{ include "app.resources" . }}`.
_EMITS_RESOURCES = r"\{\{.*[Rr]esources"


TEST_HOOK_NOTE = (
    "It is a `helm test` hook pod, which runs only on `helm test`: a notice, not a finding "
    "about the release."
)


def is_test_hook(body: Mapping[str, Any]) -> bool:
    """Whether a rendered object is a `helm.sh/hook: test` (or the old `test-success`) hook."""
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    hooks = annotations.get("helm.sh/hook") if isinstance(annotations, Mapping) else None
    names = {h.strip() for h in hooks.split(",")} if isinstance(hooks, str) else set()
    return bool(names & {"test", "test-success", "test-failure"})


@dataclass(frozen=True)
class Where:
    path: str | None
    line: int | None
    origin: Origin | None = None  # the rendered field: the culprit's `resources`


def change_finding(change: Change, profile: str, chart: str, head: Tree, base: Tree) -> Finding:
    if change.kind is ChangeKind.ADDED:
        return _added(change, profile, chart, head)
    if change.kind is ChangeKind.REMOVED:
        assert change.base is not None
        old = change.base
        title = TITLE_REMOVED.format(key=old.key, base=old.qos_class, profile=profile)
        message = MSG_REMOVED.format(profile=profile, key=old.key, base=old.qos_class)
        data: dict[str, object] = {"base": str(old.qos_class), "head": None, "causes": []}
        where = replace(locate(base, old, ()), origin=None)  # gone at head: nothing rendered there
        return _finding(REMOVED, title, message, chart, profile, old, where, data)
    return _changed(change, profile, chart, head)


def _changed(change: Change, profile: str, chart: str, head: Tree) -> Finding:
    old, new = change.base, change.head
    assert old is not None and new is not None
    down = new.qos_class.rank > old.qos_class.rank
    causes = _new_causes(new, old) if down else _new_causes(old, new)
    if old.qos_class is new.qos_class:  # a rename that kept its class has nothing to explain
        causes = ()
    why = "; ".join(c.describe() for c in causes) or UNKNOWN_CAUSE
    if not down and old.qos_class is not new.qos_class:
        why = f"{AT_BASE}{why}"
    fmt = {"profile": profile, "base": old.qos_class, "head": new.qos_class}
    if change.kind is ChangeKind.RENAMED:
        same = old.qos_class is new.qos_class
        rule = RENAMED if same else (DOWNGRADE if down else UPGRADE)
        title = (TITLE_RENAMED if same else TITLE_RENAMED_CHANGE).format(
            old=old.key, new=new.key, **fmt
        )
        message = MSG_RENAMED.format(
            old=old.key, new=new.key, why="" if same else f": {why}", **fmt
        )
    else:
        rule = DOWNGRADE if down else UPGRADE
        title = TITLE_CHANGE.format(key=new.key, **fmt)
        message = MSG_CHANGE.format(key=new.key, why=why, **fmt)
    data = _data(old, new, causes)
    restores, fixes = restoring_fixes(old, new) if rule == DOWNGRADE else (None, ())
    if restores is not None and fixes:
        fix = fix_data(restores, fixes)
        data["fix"] = fix
        message = f"{message} {fix_sentence(fix, message)}"
    return _finding(rule, title, message, chart, profile, new, locate(head, new, causes), data)


def _added(change: Change, profile: str, chart: str, head: Tree) -> Finding:
    new = change.head
    assert new is not None
    rule = NEW_BEST_EFFORT if new.qos_class is QoSClass.BEST_EFFORT else ADDED
    causes = new.qos.causes
    why = f": {'; '.join(c.describe() for c in causes)}" if causes else ""
    title = TITLE_ADDED.format(key=new.key, head=new.qos_class, profile=profile)
    message = MSG_ADDED.format(profile=profile, key=new.key, head=new.qos_class, why=why)
    data = _data(None, new, causes)
    return _finding(rule, title, message, chart, profile, new, locate(head, new, causes), data)


def profile_finding(profile: str, chart: str, views: Mapping[str, PodView], added: bool) -> Finding:
    """One notice for a profile that exists at one side only, rather than one per pod."""
    verb = "added" if added else "removed"
    tally = Counter(str(v.qos_class) for v in views.values())
    classes = ", ".join(f"{n} {cls}" for cls, n in sorted(tally.items()))
    fmt = {
        "profile": profile,
        "verb": verb,
        "count": len(views),
        "s": "" if len(views) == 1 else "s",
    }
    side = "head" if added else "base"
    return Finding(
        check=CHECK,
        severity=Severity.NOTICE,
        rule=ADDED if added else REMOVED,
        title=TITLE_PROFILE.format(**fmt),
        message=MSG_PROFILE.format(classes=f" ({classes})" if classes else "", **fmt),
        chart=chart,
        profile=profile,
        data={side: {k: str(v.qos_class) for k, v in sorted(views.items())}},
    )


def bad_quantity_finding(
    bad: BadQuantity, view: PodView, profile: str, chart: str, head: Tree, known: bool
) -> Finding:
    who = _who(bad.role, bad.container)
    fmt = {"profile": profile, "key": view.key, "field": bad.field}
    message = MSG_BAD.format(who=who, value=bad.value, reason=bad.reason, **fmt)
    where = _locate_container(head, view, bad.container, bad.role)
    return Finding(
        check=CHECK,
        severity=Severity.NOTICE if known else Severity.FAILURE,
        rule=BAD_QUANTITY,
        title=TITLE_BAD.format(**fmt),
        message=message,
        chart=chart,
        profile=profile,
        subject=view.key,
        path=where.path,
        line=where.line,
        origin=where.origin,
        data={
            "container": bad.container,
            "field": bad.field,
            "value": bad.value,
        },
        preexisting=known,
    )


def quota_finding(
    gaps: list[QuotaGap], view: PodView, profile: str, chart: str, head: Tree, known: set[str]
) -> Finding:
    """All the fields one container lacks under the quotas of its namespace, in one finding."""
    first = gaps[0]
    fields = [g.field for g in gaps]
    quotas = sorted({q for g in gaps for q in g.quotas})
    new = [f for f in fields if f not in known]
    who = _who(first.role, first.container)
    fmt = {"profile": profile, "key": view.key, "who": who, "fields": " or ".join(fields)}
    message = MSG_QUOTA.format(
        quotas=", ".join(quotas),
        namespace=view.doc.namespace,
        already="" if new else ALREADY,
        **fmt,
    )
    where = _locate_container(head, view, first.container, first.role)
    return Finding(
        check=CHECK,
        severity=Severity.FAILURE if new else Severity.NOTICE,
        rule=QUOTA,
        title=TITLE_QUOTA.format(**fmt),
        message=message,
        chart=chart,
        profile=profile,
        subject=view.key,
        path=where.path,
        line=where.line,
        origin=where.origin,
        data={
            "container": first.container,
            "fields": fields,
            "new": new,
            "quotas": quotas,
        },
        preexisting=not new,
    )


def locate(tree: Tree, view: PodView, causes: Iterable[Cause]) -> Where:
    """The template line of the first culprit's `resources` (a pod-level cause: the pod spec's);
    without a culprit (a pod added or removed whole), the first container's, which sits inside
    the right workload."""
    culprit = next((c for c in causes if c.role != ROLE_POD), None)
    if culprit is None and any(c.role == ROLE_POD for c in causes):
        return _locate_pod(tree, view)
    if culprit is not None:
        return _locate_container(tree, view, culprit.container, culprit.role)
    containers = view.qos.resources.containers
    first = containers[0] if containers else None
    return _locate_container(
        tree, view, first.name if first else None, first.role if first else None
    )


def _locate_container(
    tree: Tree, view: PodView, container: str | None, role: str | None = None
) -> Where:
    """The line that writes the container's resources: its `resources:` key, else the directive
    in its block that emits them (`{{- toYaml .Values.resources | nindent 12 }}`), else its name;
    where the template's containers cannot be told apart, the container's `- name:` line, else
    the object's `kind:` line."""
    source = tree.text(view.doc.template)
    line = (
        container_line(source, container, key_pattern(RESOURCES), _EMITS_RESOURCES, role=role)
        if container
        else None
    )
    if line is None and container:
        line = container_name_line(source, container)
    if line is None:
        line = kind_line(source, view.doc.kind)
    origin = container_origin(view.doc, view.spec, container, line, RESOURCES)
    return Where(view.doc.template, line, origin if container else None)


def _locate_pod(tree: Tree, view: PodView) -> Where:
    """Pod-level `spec.resources`: its key in the template, else the object's `kind:` line."""
    source = tree.text(view.doc.template)
    line = nested_line(source, "spec", "template", "spec", RESOURCES)
    if (
        line is None
        or source is None
        or not re.search(key_pattern(RESOURCES), git_lines(source)[line - 1])
    ):
        line = kind_line(source, view.doc.kind)
    return Where(
        view.doc.template, line, container_origin(view.doc, view.spec, None, line, RESOURCES)
    )


def _new_causes(worse: PodView, better: PodView) -> tuple[Cause, ...]:
    """The causes on the worse side that the better side does not share; all of them if none is
    new (the same gap can cost more class when another container changed)."""
    seen = {c.describe() for c in better.qos.causes}
    fresh = tuple(c for c in worse.qos.causes if c.describe() not in seen)
    return fresh or worse.qos.causes


def _data(old: PodView | None, new: PodView, causes: Iterable[Cause]) -> dict[str, object]:
    return {
        "base": str(old.qos_class) if old else None,
        "head": str(new.qos_class),
        "causes": [c.to_json() for c in causes],
        **({"renamed_from": old.key} if old is not None and old.key != new.key else {}),
    }


def _who(role: str, container: str | None) -> str:
    return "pod-level spec.resources" if role == ROLE_POD else f"{role} {container}"


def _finding(
    rule: str,
    title: str,
    message: str,
    chart: str,
    profile: str,
    view: PodView,
    where: Where,
    data: Mapping[str, object],
) -> Finding:
    severity = SEVERITY[rule]
    if is_test_hook(view.doc.body) and severity is not Severity.NOTICE:
        # A `helm test` pod runs only when someone runs `helm test`, and is gone after: its QoS
        # class costs the cluster nothing while the release runs.
        severity = Severity.NOTICE
        message = f"{message} {TEST_HOOK_NOTE}"
        data = {**data, "test_hook": True}
    return Finding(
        check=CHECK,
        severity=severity,
        rule=rule,
        title=title,
        message=message,
        chart=chart,
        profile=profile,
        subject=view.key,
        path=where.path,
        line=where.line,
        data=data,
        origin=where.origin,
    )
