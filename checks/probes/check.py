"""The `probes` check: a probe that cannot succeed, one the chart forbids, and what a PR changes in
its probes.

A probe naming a port that no `containerPort` of its container carries is a failure: the kubelet
cannot resolve it. A numeric probe port that no containerPort declares is a notice (Kubernetes does
not require one, the list is informational), and a warning, rule `probe-port-moved-undeclared`,
where the PR moves the probe there off a port its container declares. A `*_PORT` variable that
neither the probes nor a containerPort use is a warning; a probe kind the config forbids
(`probes.forbid`) is a finding; a notice says when a probe's handler, path, port or timeout
changed.

A readiness probe on a port nothing declares keeps the pod out of its Service for ever; a liveness
or startup probe there restarts it for ever. Which probe kinds a workload may have is a decision
the config records (`probes.forbid`), e.g. no liveness probe on a service whose restart is costly;
its options live at the top level of the config (`probes:`), not under `checks:`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from functools import partial
from typing import Any, NamedTuple

from bot.git.objects import Tree
from bot.lru import IdentityMemo
from bot.model.check import Check
from bot.model.context import ChartContext, Rendered
from bot.model.manifests import Document, pod_spec
from bot.model.origin import container_origin
from bot.model.report import Finding, Severity
from bot.textlines import git_lines
from checks.kit.containers import Container, pod_containers
from checks.kit.delta import Issue, changes_only, compare
from checks.kit.template_lines import block_line, container_line, key_pattern, kind_line
from checks.probes.model import ContainerFacts, Ports, Probe, facts
from checks.probes.options import ProbesConfig
from checks.probes.suggest import suggest, values_fix

NAME = "probes"
PORT, ENV_PORT, FORBIDDEN, CHANGED = "probe-port", "env-port", "forbidden-probe", "probe-changed"
UNDECLARED = "probe-port-undeclared"
MOVED = "probe-port-moved-undeclared"
SEVERITY = {
    PORT: Severity.FAILURE,
    # Kubernetes does not require a numeric probe port to be a declared containerPort (the list
    # is informational): an OpenTelemetry collector's health check on 13133 is real and works.
    UNDECLARED: Severity.NOTICE,
    # But a probe the PR moves off the port its container declares, to a number the container does
    # not declare, is likelier a slip than a listener nobody wrote down: worth a look, not a block.
    MOVED: Severity.WARNING,
    ENV_PORT: Severity.WARNING,
    FORBIDDEN: Severity.FAILURE,
    CHANGED: Severity.NOTICE,
}
CONSEQUENCE = {
    "readiness": "the pod never becomes Ready",
    "liveness": "the kubelet restarts the container for ever",
    "startup": "the kubelet kills the container before it ever starts",
}
TITLE_PORT = "{subject}: {who} {kind} probe port {port} is not a containerPort"
MSG_PORT = (
    "{subject}: the {kind} probe of {who} checks port {port}, which matches no containerPort "
    "of {who} (declared: {declared}): it cannot succeed, and {consequence}."
)
TITLE_UNDECLARED = "{subject}: {who} {kind} probe port {port} is not a declared containerPort"
MSG_UNDECLARED = (
    "{subject}: the {kind} probe of {who} checks port {port}, which no containerPort of {who} "
    "declares (declared: {declared}). Kubernetes does not require it, so this is fine if the app "
    "listens on {port}; if it does not, {consequence}."
)
TITLE_MOVED = "{subject}: {who} {kind} probe moved from port {was} to undeclared port {port}"
MSG_MOVED = (
    "{subject}: the {kind} probe of {who} checked port {was}, which its container declares, and now "
    "checks {port}, which no containerPort of {who} declares (declared: {declared}). Kubernetes "
    "accepts it, so this is fine if the app listens on {port}; if it does not, {consequence}."
)
TITLE_ENV = "{subject}: {who} listens on {env}={value}? its probes check {probe_ports}"
MSG_ENV = (
    "{subject}: {who} sets {env}={value}, but its {kinds} port {probe_ports} and no "
    "containerPort is {value} (declared: {declared}): if the app listens on {env}, the probe "
    "cannot succeed."
)
TITLE_FORBIDDEN = "{subject}: {who} has a {kind} probe, which config forbids"
MSG_FORBIDDEN = (
    "{subject}: {who} has a {kind} probe; `probes.forbid` in the config forbids {kind} probes "
    "on {pattern}."
)
TITLE_CHANGED = "{subject}: {who} {kind} probe changed"
MSG_CHANGED = "{subject}: the {kind} probe of {who} changed: {changes}."
ARROW = "→"


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    forbid = dict(ctx.config.options(NAME, ProbesConfig).forbid)
    base = {p: _issues(ctx.base, r, forbid) for p, r in chart.base.items()}
    head = {
        p: _issues(ctx.head, r, forbid, _declared_probes(chart.base.get(p)))
        for p, r in chart.head.items()
    }
    changed = {
        p: _changes(ctx.head, chart.base[p], r) for p, r in chart.head.items() if p in chart.base
    }
    found = compare(NAME, chart.path, base, head, SEVERITY)
    findings = [suggest(ctx, f) if f.rule == PORT else f for f in found]
    return findings + changes_only(NAME, chart.path, changed, SEVERITY)


def _issues(
    tree: Tree,
    rendered: Rendered,
    forbid: Mapping[str, Sequence[str]],
    was: _WasDeclared | None = None,
) -> list[Issue] | None:
    """The render's issues; `was`: the base's probes on declared ports (for a head render)."""
    if rendered.error is not None:
        return None
    issues: list[Issue] = []
    for doc, _, container in pod_containers(rendered.documents):
        suspect = _suspect(container)
        issues += [
            _port_issue(tree, doc, container, suspect, p, was or {}) for p in suspect.unmatched
        ]
        if suspect.env_unused:
            issues += _env_issues(tree, doc, container, suspect)
        if forbid:
            issues += _forbidden(tree, doc, container, suspect.facts.probes, forbid)
    return issues


# (object, container, probe kind) → the declared port the probe checked at base.
_WasDeclared = Mapping[tuple[str, str, str], "int | str"]


def _declared_probes(rendered: Rendered | None) -> _WasDeclared:
    """The base's probes that checked a port their container declares."""
    if rendered is None or rendered.error is not None:
        return {}
    found: dict[tuple[str, str, str], int | str] = {}
    for doc, _, container in pod_containers(rendered.documents):
        known = _suspect(container).facts
        for probe in known.probes:
            if probe.port is not None and known.ports.declares(probe.port):
                found[(doc.key, container.name, probe.kind)] = probe.port
    return found


class _Suspect(NamedTuple):
    """What a container says before a document names it: its probes on ports it does not declare,
    and its `*_PORT` variables that no probe or containerPort uses."""

    facts: ContainerFacts
    unmatched: tuple[Probe, ...]
    checked: Mapping[str, int]  # probe kind -> the port number it checks
    env_unused: tuple[tuple[str, int], ...]  # sorted by name


# A container's verdict is the same in every render that repeats it (the same parsed mapping).
_SUSPECTS: IdentityMemo[Mapping[str, Any], _Suspect] = IdentityMemo(2048)  # each keeps its object


def _suspect(container: Container) -> _Suspect:
    return _SUSPECTS.get_or_make(container.body, _judge)


def _judge(body: Mapping[str, Any]) -> _Suspect:
    known = facts(body)
    declared = known.ports
    checked = {
        p.kind: n for p in known.probes if p.handler and (n := declared.resolve(p.port)) is not None
    }
    unused = tuple(
        (env, value)
        for env, value in sorted(known.env_ports.items())
        if checked and value not in checked.values() and value not in declared.numbers
    )
    return _Suspect(
        known, tuple(p for p in known.probes if _unmatched(declared, p)), checked, unused
    )


def _unmatched(declared: Ports, probe: Probe) -> bool:
    return probe.handler in ("httpGet", "tcpSocket", "grpc") and not declared.declares(probe.port)


def _port_issue(
    tree: Tree,
    doc: Document,
    container: Container,
    suspect: _Suspect,
    probe: Probe,
    was: _WasDeclared,
) -> Issue:
    fmt = {"subject": doc.key, "who": container.who, "kind": probe.kind, "port": probe.port}
    fmt |= {"declared": suspect.facts.ports.describe(), "consequence": CONSEQUENCE[probe.kind]}
    # Only a named port that no containerPort carries cannot work: the kubelet cannot resolve it.
    named = isinstance(probe.port, str)
    before = None if named else was.get((doc.key, container.name, probe.kind))
    rule, title, message = (
        (PORT, TITLE_PORT, MSG_PORT)
        if named
        else (UNDECLARED, TITLE_UNDECLARED, MSG_UNDECLARED)
        if before is None
        else (MOVED, TITLE_MOVED, MSG_MOVED)
    )
    return Issue(
        rule=rule,
        subject=doc.key,
        container=container.name,
        detail=f"{probe.kind} port {probe.port}",
        title=title.format(was=before, **fmt),
        message=message.format(was=before, **fmt),
        data={"probe": probe.kind, "port": probe.port, **({"was": before} if before else {})},
        path=doc.template,
        locate=partial(_probe_port_line, tree, doc, container, probe),
        field=_probe_field(doc, container, probe, "port"),
    )


def _env_issues(tree: Tree, doc: Document, container: Container, suspect: _Suspect) -> list[Issue]:
    declared, checked = suspect.facts.ports, suspect.checked
    issues = []
    for env, value in suspect.env_unused:
        probe_ports = "/".join(str(n) for n in sorted(set(checked.values())))
        fmt = {
            "subject": doc.key,
            "who": container.who,
            "env": env,
            "value": value,
            "probe_ports": probe_ports,
        }
        issues.append(
            Issue(
                rule=ENV_PORT,
                subject=doc.key,
                container=container.name,
                detail=f"{env}={value}",
                title=TITLE_ENV.format(**fmt),
                message=MSG_ENV.format(
                    kinds=_probes_check(list(checked)), declared=declared.describe(), **fmt
                ),
                data={"env": env, "value": value, "probe_ports": sorted(set(checked.values()))},
                path=doc.template,
                locate=_locator(tree, doc, container, _env_line(env)),
            )
        )
    return issues


def _probes_check(kinds: list[str]) -> str:
    if len(kinds) == 1:
        return f"{kinds[0]} probe checks"
    return f"{', '.join(kinds[:-1])} and {kinds[-1]} probes check"


def _forbidden(
    tree: Tree,
    doc: Document,
    container: Container,
    found: Sequence[Probe],
    forbid: Mapping[str, Sequence[str]],
) -> list[Issue]:
    names = (f"{doc.kind}/{doc.name}", doc.key)
    issues = []
    for probe in found:
        pattern = next(
            (
                pat
                for pat, kinds in forbid.items()
                if probe.kind in kinds and any(fnmatchcase(n, pat) for n in names)
            ),
            None,
        )
        if pattern is None:
            continue
        fmt = {"subject": doc.key, "who": container.who, "kind": probe.kind, "pattern": pattern}
        issues.append(
            Issue(
                rule=FORBIDDEN,
                subject=doc.key,
                container=container.name,
                detail=probe.kind,
                title=TITLE_FORBIDDEN.format(**fmt),
                message=MSG_FORBIDDEN.format(**fmt),
                data={"probe": probe.kind, "pattern": pattern},
                path=doc.template,
                locate=_locator(tree, doc, container, key_pattern(probe.field)),
                field=_probe_field(doc, container, probe),
            )
        )
    return issues


def _changes(tree: Tree, base: Rendered, head: Rendered) -> list[Issue]:
    if base.error is not None or head.error is not None:
        return []
    before = {
        (doc.key, c.name, p.kind): p
        for doc, _, c in pod_containers(base.documents)
        for p in _suspect(c).facts.probes
    }
    issues = []
    for doc, _, container in pod_containers(head.documents):
        suspect = _suspect(container)
        for probe in suspect.facts.probes:
            old = before.get((doc.key, container.name, probe.kind))
            if old is None:
                continue
            # A probe that cannot succeed is a failure already; its change needs no second line.
            broken = _unmatched(suspect.facts.ports, probe)
            changes = [] if broken else _differences(old, probe)
            if not changes:
                continue
            text = "; ".join(changes)
            fmt = {"subject": doc.key, "who": container.who, "kind": probe.kind}
            issues.append(
                Issue(
                    rule=CHANGED,
                    subject=doc.key,
                    container=container.name,
                    detail=f"{probe.kind}: {text}",
                    title=TITLE_CHANGED.format(**fmt),
                    message=MSG_CHANGED.format(changes=text, **fmt),
                    data={"probe": probe.kind, "changes": changes},
                    path=doc.template,
                    locate=_locator(tree, doc, container, key_pattern(probe.field)),
                    field=_probe_field(doc, container, probe),
                )
            )
    return issues


def _differences(old: Probe, new: Probe) -> list[str]:
    if (
        old.handler == new.handler
        and old.path == new.path
        and old.port == new.port
        and old.timeout == new.timeout
    ):
        return []  # the common case, without building the descriptions below
    fields = (
        ("handler", old.handler, new.handler),
        ("path", old.path, new.path),
        ("port", old.port, new.port),
        ("timeoutSeconds", old.timeout, new.timeout),
    )
    return [
        f"{'' if name == 'handler' else name + ' '}{_shown(old_value)} {ARROW} {_shown(new_value)}"
        for name, old_value, new_value in fields
        if old_value != new_value
    ]


def _shown(value: object) -> str:
    return "(unset)" if value is None else str(value)


def _line(tree: Tree, doc: Document, container: Container, *patterns: str) -> int | None:
    """The line that writes the field: the first of `patterns` found in the container's block;
    where the template's containers cannot be told apart (a helper writes the list, the
    container's name is templated), the first of `patterns` that occurs once in the template;
    then the container's name; the object's `kind:` line only when nothing else is there."""
    source = tree.text(doc.template)
    found = container_line(source, container.name, *patterns, role=container.role)
    if found is None:
        found = next((n for p in patterns if (n := _only_line(source, p)) is not None), None)
    return found or kind_line(source, doc.kind)


def _only_line(source: str | None, pattern: str) -> int | None:
    """The one line of `source` matching `pattern`, or None (none, or several: no telling)."""
    rx = re.compile(pattern)
    hits = [n for n, text in enumerate(git_lines(source or ""), 1) if rx.search(text)]
    return hits[0] if len(hits) == 1 else None


def _locator(
    tree: Tree, doc: Document, container: Container, *patterns: str
) -> partial[int | None]:
    """`_line`, for when the issue becomes a finding."""
    return partial(_line, tree, doc, container, *patterns)


def _probe_port_line(tree: Tree, doc: Document, container: Container, probe: Probe) -> int | None:
    """The line that writes the probe's port (`port: web`, `port: {{ .Values.probe.port }}`): in
    the probe's block, else the probe's own line."""
    line = _line(tree, doc, container, key_pattern(probe.field), _port_line(probe))
    port = block_line(tree.text(doc.template), line, key_pattern("port"))
    return port or line


def _port_line(probe: Probe) -> str:
    """A directive that emits the probe, or its port (`{{ include "app.livenessProbe" . }}`,
    `port: {{ .Values.probes.port }}`), for when its key is not written literally."""
    return rf"\{{\{{.*({re.escape(probe.field)}|[Pp]robe)"


def _probe_field(
    doc: Document, container: Container, probe: Probe, *under: str
) -> tuple[str | int, ...]:
    """The probe's field (and `under` its handler, e.g. its `port`), from the pod spec."""
    origin = container_origin(doc, pod_spec(doc) or {}, container.body, None, probe.field)
    if len(origin.field) < 3:  # the container is not in its pod spec's lists: no field to name
        return ()
    handler = (probe.handler,) if under and probe.handler else ()
    return (*origin.field, *handler, *under)


def _env_line(env: str) -> str:
    return rf"^\s*(-\s+)?name:\s*[\"']?{re.escape(env)}[\"']?\s*$"


CHECK = Check(
    NAME,
    "Probes",
    run,
    "chart",
    values_fix=values_fix,
    options=ProbesConfig,
    options_top_level=True,
)
