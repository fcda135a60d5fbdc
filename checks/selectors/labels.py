"""Label selectors as the API server evaluates them: a LabelSelector (`matchLabels`,
`matchExpressions`), a Service's plain map, or kubectl's string syntax (`a=b,c!=d,e in (f,g),!h`);
and, when one selects nothing, what the pods it was meant for do carry."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

IN, NOT_IN, EXISTS, NOT_EXISTS = "In", "NotIn", "Exists", "DoesNotExist"
_SET_TERM = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)\s*$")
_EQ_TERM = re.compile(r"^\s*([^\s!=(),]+)\s*(==|=|!=)\s*([^\s!=(),]*)\s*$")
_KEY_TERM = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*$")
# What a rendered script may hold that the check cannot evaluate: shell or template expansion.
_UNRESOLVED = ("$", "`", "{{")
HINTED_PODS = 3


class Requirement(NamedTuple):
    key: str
    op: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == EXISTS:
            return self.key in labels
        if self.op == NOT_EXISTS:
            return self.key not in labels
        if self.op == IN:
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values

    def __str__(self) -> str:
        if self.op == EXISTS:
            return self.key
        if self.op == NOT_EXISTS:
            return f"!{self.key}"
        if len(self.values) == 1:
            return f"{self.key}{'=' if self.op == IN else '!='}{self.values[0]}"
        return f"{self.key} {'in' if self.op == IN else 'notin'} ({','.join(self.values)})"


Selector = tuple[Requirement, ...]


class Pod(NamedTuple):
    """A rendered pod template, by the object that owns it; or, with `own`, a labelled object
    itself (what `kubectl get deploy -l …` selects)."""

    kind: str
    name: str
    namespace: str
    labels: Mapping[str, str]
    own: bool = False

    def carries(self, key: str) -> str:
        label = f"{key}={self.labels[key]}"
        if self.own:
            return f"{self.kind} {self.name} carries {label}"
        return f"pods of {self.kind} {self.name} carry {label}"


def label_text(value: Any) -> str:
    """A label value as the API server would hold it (YAML may have parsed `true` or `1.0`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def labels_of(node: Any) -> dict[str, str]:
    return {str(k): label_text(v) for k, v in node.items()} if isinstance(node, dict) else {}


def from_map(node: Any) -> Selector:
    """A Service's `selector`: every key must equal its value."""
    return tuple(Requirement(k, IN, (v,)) for k, v in sorted(labels_of(node).items()))


def from_label_selector(node: Any) -> Selector | None:
    """A LabelSelector; None when it is not one (the API server would reject it)."""
    if not isinstance(node, dict):
        return None
    reqs = list(from_map(node.get("matchLabels")))
    for expr in node.get("matchExpressions") or ():
        if not isinstance(expr, dict) or expr.get("operator") not in (
            IN,
            NOT_IN,
            EXISTS,
            NOT_EXISTS,
        ):
            return None
        values = tuple(label_text(v) for v in expr.get("values") or ())
        reqs.append(Requirement(str(expr.get("key")), str(expr["operator"]), values))
    return tuple(reqs)


def parse_selector(text: str) -> Selector | None:
    """kubectl's `-l` syntax; None when it cannot be read, or holds an expansion left to the shell."""
    if not text.strip() or any(mark in text for mark in _UNRESOLVED):
        return None
    reqs = []
    for term in _split_terms(text):
        if m := _SET_TERM.match(term):
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), IN if m.group(2) == "in" else NOT_IN, values))
        elif m := _EQ_TERM.match(term):
            op = NOT_IN if m.group(2) == "!=" else IN
            reqs.append(Requirement(m.group(1), op, (m.group(3),)))
        elif m := _KEY_TERM.match(term):
            reqs.append(Requirement(m.group(2), NOT_EXISTS if m.group(1) else EXISTS))
        else:
            return None
    return tuple(reqs)


def _split_terms(text: str) -> list[str]:
    """Split on the commas outside `in (...)` lists."""
    terms, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [*terms, current]


def matches(selector: Selector, labels: Mapping[str, str]) -> bool:
    return all(req.matches(labels) for req in selector)


def selected(selector: Selector, pods: Sequence[Pod]) -> list[Pod]:
    return [pod for pod in pods if matches(selector, pod.labels)]


class PodIndex:
    """Pods by namespace, and by namespace and label: whether a selector selects any pod is then
    decided by trying only the pods that carry a label it requires. (A chart renders a Service per
    workload; trying every Service against every pod grows as their square.)"""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self._by_namespace: dict[str, list[Pod]] = {}
        self._by_label: dict[tuple[str, str, str], list[Pod]] = {}
        for pod in pods:
            self._by_namespace.setdefault(pod.namespace, []).append(pod)
            for key, value in pod.labels.items():
                self._by_label.setdefault((pod.namespace, key, value), []).append(pod)

    def in_namespace(self, namespace: str) -> list[Pod]:
        """The pods of `namespace`, in the order given."""
        return list(self._by_namespace.get(namespace, ()))

    def selects_any(self, selector: Selector, namespace: str) -> bool:
        """Whether `selected(selector, self.in_namespace(namespace))` would find any pod."""
        # A pod an `In` requirement matches carries its key with one of its values.
        required = next((r for r in selector if r.op == IN), None)
        if required is None:
            candidates: Sequence[Pod] = self._by_namespace.get(namespace, ())
        else:
            candidates = [
                pod
                for value in required.values
                for pod in self._by_label.get((namespace, required.key, value), ())
            ]
        return any(matches(selector, pod.labels) for pod in candidates)


def describe(selector: Selector) -> str:
    return ",".join(str(req) for req in selector)


def hints(selector: Selector, pods: Sequence[Pod], noun: str = "pod") -> list[str]:
    """For a selector that selects none of `pods`: per requirement the closest pods miss, what the
    pods carry instead ("pods of Deployment jobs-manager carry app=manager") or that none carries
    the key at all."""
    best = max((sum(r.matches(p.labels) for r in selector) for p in pods), default=0)
    closest = [p for p in pods if sum(r.matches(p.labels) for r in selector) == best]
    out = []
    for req in selector:
        missing = [p for p in closest if not req.matches(p.labels)]
        if not missing:
            continue
        carriers = [p for p in missing if req.key in p.labels] or [
            p for p in pods if req.key in p.labels and not req.matches(p.labels)
        ]
        if not carriers:
            out.append(f"no {noun} carries {req.key}")
            continue
        out += [p.carries(req.key) for p in carriers[:HINTED_PODS]]
    return list(dict.fromkeys(out))
