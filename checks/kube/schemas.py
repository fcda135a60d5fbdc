"""The Kubernetes API's own schemas, as the `kubernetes-validate` package ships them: for each
Kubernetes minor version it has, one `_definitions.json` (the OpenAPI definitions as JSON Schema
2020-12, in the strict form, where an object admits no field its type does not define) whose
`x-kubernetes-group-version-kind` entries say which definition is which kind.

Only the data is used, never the package's code (which reads the files again on every object).
A version's definitions load once, when the first object is checked for it (about 10 ms and 15 MB
for 1.2 MB of JSON); a kind's schema is compiled once per version (checks/kube/compiled.py) and
kept; and an object the same in several renders (a side and a profile share identical parsed
YAML) is checked once. jsonschema is imported only for a schema the compiler does not take."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from bot.lru import BoundedCache, IdentityMemo
from checks.kube.compiled import Checker, Compiler
from checks.kube.fields import Fault, faults
from checks.kube.versions import Minor

PACKAGE = "kubernetes_validate"
SCHEMA_DIR = "kubernetes-json-schema"
DEFINITIONS = "_definitions.json"
_STRICT_DIR_RE = re.compile(r"^v(\d+)\.(\d+)\.0-local-strict$")
# A review targets one version, a worker a few: each version's definitions weigh ~15 MB.
KEPT_VERSIONS = 3
# Objects whose faults are remembered per version: a large chart's two sides and profiles.
CHECKED_OBJECTS = 8192

GVK = tuple[str, str, str]  # (group, version, kind); the core group is ""


@dataclass(frozen=True)
class ApiSchemas:
    """One Kubernetes version's API: which kinds it serves, and a validator for each."""

    version: Minor
    kinds: Mapping[GVK, str]  # → the definition's name
    groups: frozenset[str]
    document: Mapping[str, Any]  # the definitions, as loaded
    root: str  # their `$id`
    compiler: Compiler
    validators: dict[GVK, Checker]
    lock: threading.Lock
    # An object's faults, by its identity: renders that share parsed YAML share the object.
    checked: IdentityMemo[Mapping[str, Any], tuple[Fault, ...]]

    def faults(self, gvk: GVK, body: Mapping[str, Any]) -> tuple[Fault, ...] | None:
        """What the kind's schema finds at fault in `body`; None for a kind not served."""
        validator = self.validator(gvk)
        if validator is None:
            return None
        return self.checked.get_or_make(body, lambda b: faults(validator.errors(b), b))

    def validator(self, gvk: GVK) -> Checker | None:
        """The kind's checker, made the first time it is asked for; None for a kind not served."""
        found = self.validators.get(gvk)
        if found is not None or gvk not in self.kinds:
            return found
        with self.lock:  # the compiler's definitions are shared between kinds
            found = self.validators.get(gvk)
            if found is None:
                found = self.validators[gvk] = self._checker(self.kinds[gvk])
        return found

    def _checker(self, name: str) -> Checker:
        def interpreted() -> Any:
            from jsonschema import Draft202012Validator

            ref = {"$ref": f"{self.root}#/$defs/{name}"}
            return Draft202012Validator(ref, registry=self.registry())

        return Checker(self.compiler.kind(name), interpreted)

    def registry(self) -> Any:
        from referencing import Registry, Resource

        return Registry().with_resource(self.root, Resource.from_contents(self.document))


@cache
def schema_root() -> Path | None:
    """Where the package keeps its schemas, found without importing it: its own module imports
    jsonschema, referencing and PyYAML's pure-Python loader, ~60 ms the check does not need."""
    spec = find_spec(PACKAGE)
    places = spec.submodule_search_locations if spec is not None else None
    return Path(next(iter(places))) / SCHEMA_DIR if places else None


@cache
def shipped() -> tuple[Minor, ...]:
    """The Kubernetes versions whose schemas are installed, oldest first."""
    root = schema_root()
    found = []
    for entry in root.iterdir() if root is not None and root.is_dir() else ():
        match = _STRICT_DIR_RE.match(entry.name)
        if match is not None:
            found.append((int(match[1]), int(match[2])))
    return tuple(sorted(found))


_LOADED: BoundedCache[Minor, ApiSchemas] = BoundedCache(KEPT_VERSIONS)
_LOADING = threading.Lock()


def api_schemas(version: Minor) -> ApiSchemas | None:
    """The schemas of one Kubernetes minor version; None when none are installed for it."""
    if version not in shipped():
        return None
    found = _LOADED.get(version)
    if found is None:
        with _LOADING:  # one thread loads a version; the others wait for it, not load it again
            found = _LOADED.get_or_make(version, lambda: _load(version))
    return found


def _load(version: Minor) -> ApiSchemas:
    root = schema_root()
    assert root is not None  # `shipped` lists no version without it
    path = root / f"v{version[0]}.{version[1]}.0-local-strict" / DEFINITIONS
    document = json.loads(path.read_text(encoding="utf-8"))
    definitions = document["$defs"]
    kinds: dict[GVK, str] = {}
    for name, definition in definitions.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            kinds.setdefault((gvk.get("group", ""), gvk["version"], gvk["kind"]), name)
    root = document["$id"]
    return ApiSchemas(
        version=version,
        kinds=kinds,
        groups=frozenset(group for group, _, _ in kinds),
        document=document,
        root=root,
        compiler=Compiler(definitions, root),
        validators={},
        lock=threading.Lock(),
        checked=IdentityMemo(CHECKED_OBJECTS),
    )


def compiled_validators() -> int:
    """How many validators the loaded versions hold (each made once per kind)."""
    return sum(len(s.validators) for v in shipped() if (s := _LOADED.get(v)) is not None)
