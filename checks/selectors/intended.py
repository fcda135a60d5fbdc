"""For a kubectl selector that selects nothing, the pods it most plausibly meant and the labels they
do carry: what a reviewer writes next to "matches nothing" ("you mean jobs-manager's pods? they
carry `app: manager`").

A guess, so only a clear one: the pods of one object that share more with the selector than any
other, by the requirements they meet and then by resemblance (a selector value that is a word of
the object's name, `jobs-manager` in `release-jobs-manager`, or one of its label values). No
resemblance at all, or a tie between objects: no guess."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from checks.selectors.labels import IN, Pod, Selector

NAMED_LABELS = 4  # enough to write a selector from; a chart's common labels would drown them
MIN_RESEMBLING = 3  # `a`, `db` are words of too many names to mean anything
SENTENCE = "it most plausibly means {who} ({why}), which {verb} {labels}"
WHY_MATCHES = "it meets {n} of the selector's {total} requirements"
WHY_NAME = "its name has {value}"
WHY_VALUE = "it carries the value {value}"


class Intended(NamedTuple):
    pod: Pod
    why: str
    labels: Mapping[str, str]  # the labels worth naming, selector keys first

    def sentence(self) -> str:
        p = self.pod
        name = p.name.replace("`", "'")  # no valid name has one; ours must not pair with it
        who = f"{p.kind} {name}" if p.own else f"the pods of {p.kind} {name}"
        labels = ", ".join(_span(f"{k}: {v}") for k, v in self.labels.items())
        return SENTENCE.format(
            who=who, why=self.why, verb="carries" if p.own else "carry", labels=labels
        )

    def to_json(self) -> dict[str, object]:
        p = self.pod
        return {"object": f"{p.kind}/{p.namespace}/{p.name}", "labels": dict(self.labels)}


def intended(
    selector: Selector, pods: Sequence[Pod], holder: tuple[str, str, str]
) -> Intended | None:
    """The pods `selector` was most plausibly written for among `pods`, none of which it selects;
    never those of `holder` (kind, name, namespace), the object running the script."""
    candidates = [p for p in pods if _object(p) != holder]
    scored = sorted(((_score(selector, p), i) for i, p in enumerate(candidates)), reverse=True)
    if not scored or scored[0][0][:2] == (0, 0):
        return None
    best, index = scored[0]
    pod = candidates[index]
    # `kubectl get all` sees a workload and its pods: one object, however many entries.
    if any(s[:2] == best[:2] and _object(candidates[i]) != _object(pod) for s, i in scored[1:]):
        return None  # two objects as plausible: naming one would mislead
    matched, _, resembled = best
    why = WHY_MATCHES.format(n=matched, total=len(selector)) if matched else resembled
    return Intended(pod, why, _worth_naming(selector, pod, candidates))


def _object(pod: Pod) -> tuple[str, str, str]:
    return pod.kind, pod.name, pod.namespace


def _score(selector: Selector, pod: Pod) -> tuple[int, int, str]:
    """(requirements met, selector values it resembles, the first resemblance in words)."""
    matched = sum(r.matches(pod.labels) for r in selector)
    reasons = [why for r in selector if r.op == IN for v in r.values if (why := _resembles(v, pod))]
    return matched, len(reasons), reasons[0] if reasons else ""


def _resembles(value: str, pod: Pod) -> str:
    if len(value) < MIN_RESEMBLING:
        return ""
    if f"-{value.lower()}-" in f"-{pod.name.lower()}-":  # a whole word of the name, not a part
        return WHY_NAME.format(value=value)
    if value in pod.labels.values():
        return WHY_VALUE.format(value=value)
    return ""


def _worth_naming(selector: Selector, pod: Pod, others: Sequence[Pod]) -> dict[str, str]:
    """Its labels under the selector's keys, then those no other object's pods carry as well (what
    tells its pods apart), then the rest; at most NAMED_LABELS."""
    keys = [r.key for r in selector if r.key in pod.labels]
    shared = {(k, v) for o in others if o is not pod for k, v in o.labels.items()}
    own = [k for k, v in pod.labels.items() if (k, v) not in shared]
    rest = list(pod.labels)
    chosen = list(dict.fromkeys([*keys, *own, *rest]))[:NAMED_LABELS]
    return {k: pod.labels[k] for k in chosen}


def _span(text: str) -> str:
    """A code span, unless the text holds a backtick (a label the API server would refuse anyway)."""
    return text if "`" in text else f"`{text}`"
