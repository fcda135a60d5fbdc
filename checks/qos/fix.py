"""The smallest `resources` block that gives a downgraded pod its class back, and the rule that
chose its values, so that a downgrade says what to write and why, as a reviewer would.

Guaranteed needs, for every container (init and sidecar containers too: the kubelet counts them all,
checks/qos/classes.py), requests equal to limits on cpu and on memory; when pod-level
`spec.resources` is set, that block alone decides instead. Burstable needs one request anywhere."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from bot.kube.quantity import format_quantity
from checks.qos.classes import QoSClass
from checks.qos.compare import PodView
from checks.qos.pod import COMPUTE, MEMORY, ROLE_POD, Requirements, positive_compute

# For a container that sets nothing, most often one that only waits (`until nc -z …; sleep 2`):
# enough to start a shell and sleep, small enough that no node is short of it.
FLOOR = {"cpu": Fraction(1, 100), MEMORY: Fraction(16 * 2**20)}  # 10m, 16Mi
BASE, LIMIT, REQUEST, WAITS = (
    "the values it had at base",
    "its own limit, for both",
    "its own request, for both",
    "the floor for a container that only waits",
)
BURSTABLE = "one request anywhere makes the pod Burstable; this is the smallest"
GUARANTEED_RULE = "requests == limits on cpu and memory"
SENTENCE = "To restore {cls}: {blocks}."
BLOCK = "{who} {fence}resources: {yaml}{fence} ({rule})"


@dataclass(frozen=True)
class Fix:
    """One container's block (the pod level's when `container` is None) and its values' rule."""

    role: str
    container: str | None
    resources: Mapping[str, Mapping[str, str]]  # requests/limits -> resource -> quantity
    rule: str

    def to_json(self) -> dict[str, Any]:
        return {
            "container": self.container,
            "role": self.role,
            "resources": {k: dict(v) for k, v in self.resources.items()},
            "rule": self.rule,
        }


def restoring_fixes(base: PodView, head: PodView) -> tuple[QoSClass, tuple[Fix, ...]]:
    """The class the base had and the blocks that would give it back to the head's pod."""
    if base.qos_class is QoSClass.GUARANTEED:
        return QoSClass.GUARANTEED, _guaranteed(base, head)
    return QoSClass.BURSTABLE, _burstable(head)


def _guaranteed(base: PodView, head: PodView) -> tuple[Fix, ...]:
    fixes = []
    for role, name in dict.fromkeys((c.role, c.container) for c in head.qos.causes):
        now, before = _requirements(head, role, name), _requirements(base, role, name)
        if now is not None:
            fixes.append(_equalised(role, name, now, before))
    return tuple(fixes)


def _requirements(view: PodView, role: str, name: str | None) -> Requirements | None:
    resources = view.qos.resources
    if role == ROLE_POD:
        return resources.pod
    # By name only: a container that moved from init to app keeps what it needs.
    return next((c.resources for c in resources.containers if c.name == name), None)


def _equalised(role: str, name: str | None, now: Requirements, before: Requirements | None) -> Fix:
    """requests == limits on cpu and memory, each value by the first rule that gives one."""
    values: dict[str, Fraction] = {}
    rules: dict[str, list[str]] = {}
    limits, requests = positive_compute(now.limits), positive_compute(now.requests)
    was = _base_values(before)
    for resource in COMPUTE:
        if resource in limits and requests.get(resource) == limits[resource]:
            values[resource] = limits[resource]  # already equal: kept, so the block is whole
            continue
        value, rule = _choose(resource, was, limits, requests)
        values[resource] = value
        rules.setdefault(rule, []).append(resource)
    block = {r: format_quantity(q) for r, q in values.items()}
    return Fix(role, name, {"requests": block, "limits": dict(block)}, _rule_text(rules))


def _base_values(before: Requirements | None) -> dict[str, Fraction]:
    if before is None:
        return {}
    return {**positive_compute(before.requests), **positive_compute(before.limits)}


def _choose(
    resource: str,
    was: Mapping[str, Fraction],
    limits: Mapping[str, Fraction],
    requests: Mapping[str, Fraction],
) -> tuple[Fraction, str]:
    if resource in was:
        return was[resource], BASE
    # A limit over a request: the container may already use up to its limit, so the limit it is.
    if resource in limits:
        return limits[resource], LIMIT
    if resource in requests:
        return requests[resource], REQUEST
    return FLOOR[resource], WAITS


def _rule_text(rules: Mapping[str, Sequence[str]]) -> str:
    if len(rules) == 1:
        return f"{GUARANTEED_RULE}; values: {next(iter(rules))}"
    parts = "; ".join(f"{' and '.join(names)}: {rule}" for rule, names in rules.items())
    return f"{GUARANTEED_RULE}; {parts}"


def _burstable(head: PodView) -> tuple[Fix, ...]:
    containers = head.qos.resources.containers
    if not containers:
        return ()
    first = containers[0]  # app containers come first: the one the workload is about
    block = {"requests": {MEMORY: format_quantity(FLOOR[MEMORY])}}
    return (Fix(first.role, first.name, block, BURSTABLE),)


def flow_yaml(node: Mapping[str, Any]) -> str:
    """`{requests: {cpu: 10m}}`: YAML on one line, to sit in a code span (a table cell holds no
    fenced block). Keys and quantities are ours, so nothing needs quoting."""
    items = (f"{k}: {flow_yaml(v) if isinstance(v, Mapping) else v}" for k, v in node.items())
    return "{" + ", ".join(items) + "}"


def fix_data(restores: QoSClass, fixes: Sequence[Fix]) -> dict[str, Any]:
    """The finding's `data["fix"]`: the class the blocks restore, and the blocks."""
    return {"restores": str(restores), "blocks": [f.to_json() for f in fixes]}


def fix_sentence(fix: Mapping[str, Any], after: str = "") -> str:
    """The fix in words, from a finding's `data["fix"]` (so the message and the QoS table agree),
    to follow the text `after`. Its code spans' fence is longer than any backtick run there, so a
    backtick in a (hostile) container name cannot pair with ours and turn our words into code."""
    fence = "`" * (max((len(run) for run in re.findall("`+", after)), default=0) + 1)
    blocks = "; ".join(
        BLOCK.format(who=_who(b), yaml=flow_yaml(b["resources"]), rule=b["rule"], fence=fence)
        for b in fix["blocks"]
    )
    return SENTENCE.format(cls=fix["restores"], blocks=blocks)


def _who(fix: Mapping[str, Any]) -> str:
    if fix["role"] == ROLE_POD:
        return "pod-level spec.resources"
    # Said again here after the causes said it once: a backtick in it (no valid name has one)
    # would pair with the first and make code of all between.
    name = str(fix["container"]).replace("`", "'")
    return f"{fix['role']} {name}"
