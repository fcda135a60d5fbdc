"""The `uid` check: a pinned `runAsUser` that OpenShift's SCC admission rejects.

On a profile where the platform assigns UIDs (config `arbitrary_uid: true`, a rendered
`SecurityContextConstraints`, or values with `openshift: true`; checks/uid/profiles.py), no pod or
container may set `runAsUser` (the pod would stay Pending for ever) unless the pod's service
account may use an SCC the chart renders or grants (its `users`/`groups`, or RBAC `use` on it,
OpenShift's own such as `anyuid` included) whose `runAsUser` strategy admits that UID
(checks/uid/admission.py); otherwise `restricted-v2` applies, which gives every pod a UID from its
project's range, and the finding names each SCC and why it does not admit the pin.
`runAsNonRoot: true` is what such a chart should say instead, and stays allowed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from bot.git.objects import Tree
from bot.model.check import Check
from bot.model.context import ChartContext, ChartRenders, Rendered
from bot.model.manifests import Document
from bot.model.report import Finding, Severity
from bot.textlines import git_lines
from checks.kit.containers import Container, containers, mapping, render_workloads
from checks.kit.delta import Issue, compare
from checks.kit.template_lines import block_line, container_line, key_pattern, kind_line
from checks.uid.access import pod_account
from checks.uid.admission import Admission, admit
from checks.uid.profiles import WHY_MARKED, assigned_uid_reason, default_flags
from checks.uid.scc import ROOT
from checks.uid.suggest import suggest

NAME = "uid"
PINNED = "pinned-uid"
SEVERITY = {PINNED: Severity.FAILURE}
POD_LEVEL = "pod securityContext"

TITLE = "{subject}: {who} pins runAsUser"
MESSAGE = (
    "{subject}: {who} sets runAsUser: {uid}, but the profile {why}, so the platform assigns UIDs: "
    "service account {account} may use no SCC that admits UID {uid}{together}{refusals}, so "
    "OpenShift's {scc} SCC applies and rejects a pinned UID: the pod fails admission and stays "
    "Pending. Drop runAsUser (runAsNonRoot: true is allowed), or grant the service account an SCC "
    "that admits it."
)
TOGETHER = " together with the pod's other pinned UIDs"
ADMITTED = "{subject}: pinned {uids} admitted by SCC {scc} (service account {account})"


@dataclass(frozen=True)
class Pin:
    """One `runAsUser` a pod spec sets: at pod level (`container` None) or a container's."""

    who: str
    container: Container | None
    uid: Any


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    base_defaults, head_defaults = (
        default_flags(ctx.base, chart.path),
        default_flags(ctx.head, chart.path),
    )
    base = {p: _issues(ctx.base, chart, r, base_defaults) for p, r in chart.base.items()}
    head = {p: _issues(ctx.head, chart, r, head_defaults) for p, r in chart.head.items()}
    found = compare(NAME, chart.path, base, head, SEVERITY)
    return [suggest(ctx, f) if f.rule == PINNED else f for f in found]


def _issues(
    tree: Tree, chart: ChartRenders, rendered: Rendered, defaults: Mapping[str, bool]
) -> list[Issue] | None:
    if rendered.error is not None:
        return None
    why = assigned_uid_reason(rendered, chart.profiles.get(rendered.profile), defaults)
    if why is None:
        return []
    issues = []
    for doc, pins, admission in _verdicts(rendered, why):
        if admission.scc is None:
            # One SCC admits the whole pod: when each pin passes some SCC alone, they clash.
            culprits = [p for p in pins if not admission.admits_alone(p.uid)] or pins
            issues += [_issue(tree, doc, pin, why, admission, culprits is pins) for pin in culprits]
    return issues


def _verdicts(rendered: Rendered, why: str) -> list[tuple[Document, list[Pin], Admission]]:
    """Each workload that pins a UID admission must judge, with its pins and the verdict."""
    found = []
    for doc, spec in render_workloads(rendered.documents):
        # A root container mounting a hostPath needs a privileged SCC, which cluster admins
        # grant beside the chart; only a profile marked in config says none is granted.
        root_allowed = why != WHY_MARKED and _mounts_host_path(spec)
        pins = [p for p in _pinned(spec) if not (root_allowed and p.uid == ROOT)]
        if pins:
            account = pod_account(doc, spec)
            admission = admit(rendered.documents, account, [p.uid for p in pins])
            found.append((doc, pins, admission))
    return found


def _pinned(spec: Mapping[str, Any]) -> list[Pin]:
    found: list[Pin] = []
    pod_uid = mapping(spec, "securityContext").get("runAsUser")
    if pod_uid is not None:
        found.append(Pin(POD_LEVEL, None, pod_uid))
    for c in containers(spec):
        uid = mapping(c.body, "securityContext").get("runAsUser")
        if uid is not None:
            found.append(Pin(c.who, c, uid))
    return found


def _mounts_host_path(spec: Mapping[str, Any]) -> bool:
    volumes = spec.get("volumes")
    return any(isinstance(v, dict) and "hostPath" in v for v in volumes or ())


def _issue(
    tree: Tree, doc: Document, pin: Pin, why: str, admission: Admission, clash: bool
) -> Issue:
    refusals = f" ({'; '.join(admission.refusals)})" if admission.refusals else ""
    message = MESSAGE.format(
        subject=doc.key,
        who=pin.who,
        uid=pin.uid,
        why=why,
        account=admission.account,
        together=TOGETHER if clash else "",
        refusals=refusals,
        scc=admission.applies,
    )
    return Issue(
        rule=PINNED,
        subject=doc.key,
        container=pin.container.name if pin.container else None,
        detail="runAsUser",
        title=TITLE.format(subject=doc.key, who=pin.who),
        message=message,
        path=doc.template,
        locate=partial(_line, tree, doc, pin.container),
        data={"run_as_user": pin.uid, "reason": why, "scc": admission.applies},
    )


def _line(tree: Tree, doc: Document, container: Container | None) -> int | None:
    source = tree.text(doc.template)
    if container is not None:
        patterns = (key_pattern("runAsUser"), key_pattern("securityContext"))
        line = container_line(source, container.name, *patterns, role=container.role)
    else:
        line = _pod_security_line(source)
    return line or kind_line(source, doc.kind)


def _pod_security_line(source: str | None) -> int | None:
    """The pod-level `securityContext:` (indented like `containers:`), or its runAsUser line."""
    if not source:
        return None
    lines = git_lines(source)
    marker = next((t for t in lines if t.lstrip().startswith("containers:")), None)
    if marker is None:
        return None
    indent = " " * (len(marker) - len(marker.lstrip()))
    opener = next(
        (n for n, t in enumerate(lines, 1) if t.startswith(f"{indent}securityContext:")), None
    )
    return block_line(source, opener, key_pattern("runAsUser")) or opener


def explain(ctx: ChartContext) -> list[str]:
    """For `--explain`: which profiles were held to assigned UIDs and why, and which pinned UIDs
    an SCC the chart grants admits."""
    chart = ctx.chart
    lines = []
    defaults = default_flags(ctx.head, chart.path)
    for profile, rendered in sorted(chart.head.items()):
        if rendered.error is None:
            why = assigned_uid_reason(rendered, chart.profiles.get(profile), defaults)
            what = f"checked: the profile {why}" if why else "not checked: UIDs are not assigned"
            lines.append(f"uid: {chart.path} profile {profile}: {what}")
            lines += [
                f"uid: {chart.path} profile {profile}: {line}" for line in _admitted(rendered, why)
            ]
    return lines


def _admitted(rendered: Rendered, why: str | None) -> list[str]:
    return [
        ADMITTED.format(
            subject=doc.key,
            uids=_uids([p.uid for p in pins]),
            scc=admission.scc,
            account=admission.account,
        )
        for doc, pins, admission in (_verdicts(rendered, why) if why else [])
        if admission.scc is not None
    ]


def _uids(uids: list[Any]) -> str:
    shown = list(dict.fromkeys(str(uid) for uid in uids))  # rendered values: maybe unhashable
    return f"UID {shown[0]}" if len(shown) == 1 else f"UIDs {', '.join(shown)}"


CHECK = Check(NAME, "Assigned UIDs", run, "chart", explain=explain)
