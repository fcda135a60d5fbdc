"""Deprecated and removed Kubernetes API versions (deprecated_apis.yaml, the facts of Kubernetes'
deprecation guide), asked of one object's apiVersion and kind at the target version, as pluto does."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from checks.kube.versions import Minor, minor

TABLE = "deprecated_apis.yaml"


@dataclass(frozen=True)
class Replacement:
    api: str
    kind: str | None  # None: the same kind
    since: Minor


@dataclass(frozen=True)
class Deprecation:
    api: str
    kind: str
    deprecated: Minor
    removed: Minor | None  # None: still served, no removal scheduled
    use: tuple[Replacement, ...]
    note: str

    def replacement(self, target: Minor) -> Replacement | None:
        """The newest replacement the target version serves, else the first there is."""
        served = [r for r in self.use if r.since <= target]
        if served:
            return max(served, key=lambda r: r.since)
        return self.use[0] if self.use else None

    def advice(self, target: Minor) -> str:
        """What to use instead, or what to know when nothing replaces it."""
        use = self.replacement(target)
        said = [f"use {use.api} {use.kind or self.kind}"] if use is not None else []
        said += [self.note] if self.note else []
        return "; ".join(said) or "it has no replacement"


def deprecation(api: str, kind: str) -> Deprecation | None:
    return _table().get((api, kind))


@cache
def _table() -> dict[tuple[str, str], Deprecation]:
    text = (resources.files("checks.kube") / TABLE).read_text(encoding="utf-8")
    table = {}
    for entry in yaml.safe_load(text):
        use = tuple(
            Replacement(r["api"], r.get("kind"), minor(r["since"])) for r in entry.get("use", ())
        )
        removed = entry.get("removed")
        for kind in entry["kinds"]:
            table[(entry["api"], kind)] = Deprecation(
                api=entry["api"],
                kind=kind,
                deprecated=minor(entry["deprecated"]),
                removed=minor(removed) if removed is not None else None,
                use=use,
                note=" ".join(str(entry.get("note", "")).split()),
            )
    return table
