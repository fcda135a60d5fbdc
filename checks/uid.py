"""The `uid` check: a pinned `runAsUser` on a platform that assigns UIDs.

OpenShift's restricted SCC gives every pod a UID from its project's range; a pod, init container or
container that pins `runAsUser` fails admission there, so the pod stays Pending for ever.
`runAsNonRoot: true` is what such a chart should say instead, and stays allowed."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from bot.engine.check import Check
from bot.engine.config import ProfileSpec
from bot.engine.context import ChartContext, ChartRenders, Rendered
from bot.engine.manifests import Document
from bot.engine.report import Finding, Severity
from bot.engine.yaml import bounded
from bot.engine.yaml.errors import YAML_FAILURES
from bot.git.objects import Tree
from bot.lru import BoundedCache
from checks.kit.containers import Container, containers, mapping, render_workloads
from checks.kit.delta import Issue, compare
from checks.kit.template_lines import block_line, container_line, key_pattern, kind_line

NAME = "uid"
PINNED = "pinned-uid"
SEVERITY = {PINNED: Severity.FAILURE}
SCC_KIND = "SecurityContextConstraints"
OPENSHIFT_KEY = "openshift"
ROOT = 0
POD_LEVEL = "pod securityContext"

# values.yaml texts remembered: a worker reviews the same few charts again and again.
_DEFAULTS: BoundedCache[str, Mapping[str, Any]] = BoundedCache(64)

WHY_MARKED = "is marked `arbitrary_uid` in config"
WHY_SCC = f"renders a {SCC_KIND}"
WHY_VALUES = "sets `{key}: true` in its values"
TITLE = "{subject}: {who} pins runAsUser"
MESSAGE = (
    "{subject}: {who} sets runAsUser: {uid}, but the profile {why}, so the platform assigns UIDs "
    "(OpenShift's restricted SCC) and rejects a pinned one: the pod fails admission and stays "
    "Pending. Drop runAsUser; runAsNonRoot: true is allowed."
)


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    base_defaults, head_defaults = (
        chart_defaults(ctx.base, chart.path),
        chart_defaults(ctx.head, chart.path),
    )
    base = {p: _issues(ctx.base, chart, r, base_defaults) for p, r in chart.base.items()}
    head = {p: _issues(ctx.head, chart, r, head_defaults) for p, r in chart.head.items()}
    return compare(NAME, chart.path, base, head, SEVERITY)


def assigned_uid_reason(
    rendered: Rendered, spec: ProfileSpec | None, defaults: Mapping[str, Any] | None = None
) -> str | None:
    """Why a profile runs where UIDs are assigned, or None when it does not. `defaults` are the
    chart's own values.yaml, which a profile's values override key by key."""
    if spec is not None and spec.arbitrary_uid:
        return WHY_MARKED
    if any(doc.kind == SCC_KIND for doc in rendered.documents):
        return WHY_SCC
    flags = {**openshift_flags(defaults or {}), **openshift_flags(rendered.values)}
    key = next((path for path, on in sorted(flags.items()) if on), None)
    return WHY_VALUES.format(key=key) if key else None


def openshift_flags(values: Mapping[str, Any], prefix: str = "") -> dict[str, bool]:
    """Every `openshift` key (or `openshift.enabled`) by dotted path, and whether it is true."""
    flags: dict[str, bool] = {}
    for key, value in values.items():
        path = f"{prefix}{key}"
        if str(key).lower() == OPENSHIFT_KEY and not isinstance(value, dict):
            flags[path] = value is True
        elif str(key).lower() == OPENSHIFT_KEY and "enabled" in value:
            flags[f"{path}.enabled"] = value["enabled"] is True
        elif isinstance(value, dict):
            flags.update(openshift_flags(value, f"{path}."))
    return flags


def chart_defaults(tree: Tree, chart: str) -> Mapping[str, Any]:
    """The chart's values.yaml; empty when it is missing or unreadable (the render reports that).
    Read-only: the same text gives the same mapping, parsed once."""
    text = tree.text("values.yaml" if chart in ("", ".") else f"{chart}/values.yaml")
    return _DEFAULTS.get_or_make(text, lambda: _parse_defaults(text)) if text else {}


def _parse_defaults(text: str) -> Mapping[str, Any]:
    try:
        # As every other read of a values file: libyaml's loader, with the alias budget.
        data = bounded.load(text)
    except YAML_FAILURES:
        return {}
    return data if isinstance(data, dict) else {}


def _issues(
    tree: Tree, chart: ChartRenders, rendered: Rendered, defaults: Mapping[str, Any]
) -> list[Issue] | None:
    if rendered.error is not None:
        return None
    why = assigned_uid_reason(rendered, chart.profiles.get(rendered.profile), defaults)
    if why is None:
        return []
    issues = []
    for doc, spec in render_workloads(rendered.documents):
        # A root container mounting a hostPath needs a privileged SCC the chart grants itself;
        # only a profile marked in config says the restricted SCC applies to it anyway.
        root_allowed = why != WHY_MARKED and _mounts_host_path(spec)
        for who, container, uid in _pinned(spec):
            if not (root_allowed and uid == ROOT):
                issues.append(_issue(tree, doc, who, container, uid, why))
    return issues


def _pinned(spec: Mapping[str, Any]) -> list[tuple[str, Container | None, Any]]:
    found: list[tuple[str, Container | None, Any]] = []
    pod_uid = mapping(spec, "securityContext").get("runAsUser")
    if pod_uid is not None:
        found.append((POD_LEVEL, None, pod_uid))
    for c in containers(spec):
        uid = mapping(c.body, "securityContext").get("runAsUser")
        if uid is not None:
            found.append((c.who, c, uid))
    return found


def _mounts_host_path(spec: Mapping[str, Any]) -> bool:
    volumes = spec.get("volumes")
    return any(isinstance(v, dict) and "hostPath" in v for v in volumes or ())


def _issue(
    tree: Tree, doc: Document, who: str, container: Container | None, uid: Any, why: str
) -> Issue:
    return Issue(
        rule=PINNED,
        subject=doc.key,
        container=container.name if container else None,
        detail="runAsUser",
        title=TITLE.format(subject=doc.key, who=who),
        message=MESSAGE.format(subject=doc.key, who=who, uid=uid, why=why),
        path=doc.template,
        locate=partial(_line, tree, doc, container),
        data={"run_as_user": uid, "reason": why},
    )


def _line(tree: Tree, doc: Document, container: Container | None) -> int | None:
    source = tree.text(doc.template)
    if container is not None:
        line = container_line(
            source, container.name, key_pattern("runAsUser"), key_pattern("securityContext")
        )
    else:
        line = _pod_security_line(source)
    return line or kind_line(source, doc.kind)


def _pod_security_line(source: str | None) -> int | None:
    """The pod-level `securityContext:` (indented like `containers:`), or its runAsUser line."""
    if not source:
        return None
    lines = source.splitlines()
    marker = next((t for t in lines if t.lstrip().startswith("containers:")), None)
    if marker is None:
        return None
    indent = " " * (len(marker) - len(marker.lstrip()))
    opener = next(
        (n for n, t in enumerate(lines, 1) if t.startswith(f"{indent}securityContext:")), None
    )
    return block_line(source, opener, key_pattern("runAsUser")) or opener


def explain(ctx: ChartContext) -> list[str]:
    """For `--explain`: which profiles were held to assigned UIDs, and why."""
    chart = ctx.chart
    lines = []
    defaults = chart_defaults(ctx.head, chart.path)
    for profile, rendered in sorted(chart.head.items()):
        if rendered.error is None:
            why = assigned_uid_reason(rendered, chart.profiles.get(profile), defaults)
            what = f"checked: the profile {why}" if why else "not checked: UIDs are not assigned"
            lines.append(f"uid: {chart.path} profile {profile}: {what}")
    return lines


CHECK = Check(NAME, "Assigned UIDs", run, "chart", explain=explain)
