"""Custom resources checked against the CRDs the chart itself brings: those its templates render and
those of its `crds/` (the chart's own and its unpacked subcharts'), which Helm installs first.

A CRD's `openAPIV3Schema` is made a JSON Schema the way the API server reads a structural schema:
an object keeps only the fields its schema names (the rest are pruned) unless it says
`x-kubernetes-preserve-unknown-fields`, `x-kubernetes-int-or-string` takes an integer or a string,
`x-kubernetes-embedded-resource` admits apiVersion, kind and metadata, and the root's own
apiVersion, kind and metadata are the API server's to check. The schema is the PR's, and so is the
object: only what is checked in linear time is kept. Patterns (Python's regular expressions can
take exponential time where Go's cannot), formats, CEL rules (`x-kubernetes-validations`) and the
value validations of allOf/anyOf/oneOf/not are left out, and a schema nested past MAX_DEPTH admits
anything below."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.git.objects import Tree
from bot.lru import BoundedCache, IdentitiesMemo
from bot.model.manifests import Document
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from checks.kube.compiled import Checker, Compiler

CRD_API = "apiextensions.k8s.io/v1"  # v1beta1 CRDs are served by no Kubernetes the check targets
MAX_DEPTH = 48
# A `crds/` file past this is not read: the engine's cap for the files it reads CRDs from
# (bot/charts/profiles.py's MAX_VALUES_BYTES), which the render layer below it also holds.
MAX_CRD_FILE_BYTES = 5 * 1024 * 1024
# Kept as the CRD says them: these check a value in time linear in it.
_KEPT = (
    "type",
    "enum",
    "required",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_CRD_FILE_RE = re.compile(r"^(?:charts/[^/]+/)*crds/.+\.(?:ya?ml|json)$")
_FILES: BoundedCache[tuple[str, str], tuple[Mapping[str, Any], ...]] = BoundedCache(256)
_VALIDATORS: IdentitiesMemo[Checker] = IdentitiesMemo(512)


@dataclass(frozen=True)
class CrdVersion:
    """One version of a kind a CRD defines: `schema` None where it gives none (nothing to check)."""

    crd: str  # the CRD's name, `widgets.example.com`
    served: bool
    schema: Mapping[str, Any] | None

    def validator(self) -> Checker | None:
        """A validator for the version's objects, made once per schema."""
        schema = self.schema
        if schema is None:
            return None
        return _VALIDATORS.get_or_make((schema,), "crd", lambda: _validator(schema))


# (group, version, kind) → what the chart's CRDs say of it; (group, kind) → the versions they serve
Crds = tuple[Mapping[tuple[str, str, str], CrdVersion], Mapping[tuple[str, str], tuple[str, ...]]]


def chart_crds(tree: Tree, chart: str, documents: Iterable[Document]) -> Crds:
    """The CRDs a render of the chart at `tree` brings: rendered ones, and its `crds/` files."""
    bodies = [d.body for d in documents if d.kind == "CustomResourceDefinition"]
    bodies += _crd_files(tree, chart)
    versions: dict[tuple[str, str, str], CrdVersion] = {}
    served: dict[tuple[str, str], list[str]] = {}
    for body in bodies:
        for gvk, version in _versions(body):
            versions.setdefault(gvk, version)
            if version.served:
                served.setdefault((gvk[0], gvk[2]), []).append(gvk[1])
    return versions, {k: tuple(v) for k, v in served.items()}


def _crd_files(tree: Tree, chart: str) -> tuple[Mapping[str, Any], ...]:
    return _FILES.get_or_make((tree.commit, chart), lambda: _read_crd_files(tree, chart))


def _read_crd_files(tree: Tree, chart: str) -> tuple[Mapping[str, Any], ...]:
    prefix = f"{chart}/" if chart not in ("", ".") else ""
    found: list[Mapping[str, Any]] = []
    for path in tree.paths(prefix + "crds/") + tree.paths(prefix + "charts/"):
        if not _CRD_FILE_RE.match(path[len(prefix) :]):
            continue
        data = tree.read(path)
        if data is None or len(data) > MAX_CRD_FILE_BYTES:
            continue
        try:
            docs = bounded.load_all(data.decode("utf-8", errors="replace"))
        except YAML_FAILURES:
            continue  # Helm says so when it installs it
        found += [
            d
            for d in docs
            if isinstance(d, Mapping) and d.get("kind") == "CustomResourceDefinition"
        ]
    return tuple(found)


def _versions(body: Mapping[str, Any]) -> Iterable[tuple[tuple[str, str, str], CrdVersion]]:
    if body.get("apiVersion") != CRD_API:
        return
    spec, meta = body.get("spec"), body.get("metadata")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("group"), str):
        return
    names = spec.get("names")
    kind = names.get("kind") if isinstance(names, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if not isinstance(kind, str):
        return
    for entry in spec.get("versions") or ():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        schema = entry.get("schema")
        root = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
        yield (
            (spec["group"], entry["name"], kind),
            CrdVersion(
                str(name or f"{kind} of {spec['group']}"),
                entry.get("served", True) is not False,
                root if isinstance(root, Mapping) else None,
            ),
        )


def _validator(schema: Mapping[str, Any]) -> Checker:
    root = structural(schema, 0)
    properties = dict(root.get("properties") or {})
    for field in _ROOT_FIELDS:
        properties[field] = {}
    root["properties"] = properties
    # `structural` keeps only keywords the compiler takes.
    return Checker(Compiler().compile(root))


def structural(node: Any, depth: int) -> dict[str, Any]:
    """The JSON Schema that checks what the API server checks of `node`'s values, and prunes."""
    if not isinstance(node, Mapping) or depth > MAX_DEPTH:
        return {}
    out = {k: node[k] for k in _KEPT if k in node}
    if node.get("x-kubernetes-int-or-string") is True:
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        out["properties"] = {str(k): structural(v, depth + 1) for k, v in properties.items()}
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = structural(extra, depth + 1)
    elif isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif _prunes(node):
        out["additionalProperties"] = False
    if node.get("x-kubernetes-embedded-resource") is True:
        out.setdefault("properties", {}).update({f: {} for f in _ROOT_FIELDS})
    items = node.get("items")
    if isinstance(items, Mapping):
        out["items"] = structural(items, depth + 1)
    return out


def _prunes(node: Mapping[str, Any]) -> bool:
    """An object whose unknown fields the API server drops: one with a schema of its own."""
    if node.get("x-kubernetes-preserve-unknown-fields") is True:
        return False
    return node.get("type") == "object" or isinstance(node.get("properties"), Mapping)
