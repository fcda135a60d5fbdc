"""A chart's `values.schema.json` must not reach outside the chart.

Helm validates values against the schema before rendering, and its JSON-schema compiler loads
whatever a reference names: `{"$ref": "file:///…/app.pem"}` made a check run print the key file's
first byte ("invalid character 'S'"), and `http://169.254.169.254/…` made one request per profile.
A relative reference resolves against the schema's own `file:///` address, so it reaches the root
file system too; an `$id` moves that base; a `$schema` naming an unknown meta-schema is fetched.
So only fragments (`#/definitions/x`) may be referenced, `$id` may only be a fragment, and
`$schema` only a draft the compiler has built in. A schema that breaks this is left out of the
archive (the chart is still rendered and reviewed, unvalidated, and the review says so); inside a
vendored subchart archive it cannot be left out, so that chart is refused.
"""

from __future__ import annotations

import io
import json
import tarfile
import zlib
from collections.abc import Iterator
from typing import Any

SCHEMA_FILE = "values.schema.json"
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
ID_KEYWORDS = ("$id", "id")
# The drafts the compiler knows without fetching anything, as schemas name them.
KNOWN_METASCHEMAS = frozenset(
    f"{scheme}://json-schema.org/{draft}{end}"
    for scheme in ("http", "https")
    for draft in (
        "draft-04/schema",
        "draft-06/schema",
        "draft-07/schema",
        "draft/2019-09/schema",
        "draft/2020-12/schema",
    )
    for end in ("", "#")
)
# Keywords whose value is a schema, a list of schemas, or a map of names to schemas.
_SCHEMA_VALUED = [
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
    "items",
    "prefixItems",
    "allOf",
    "anyOf",
    "oneOf",
]
_SCHEMA_MAPS = (
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependentSchemas",
    "dependencies",
)
MAX_SCHEMA_BYTES = 1 << 20
# A vendored subchart archive is read only this far for its schemas (a gzip bomb stops here).
MAX_SCANNED_BYTES = 64 << 20


def schema_escape(text: str) -> str | None:
    """Why this schema could reach outside the chart (the first offending keyword and value), or
    None when every reference stays inside it."""
    try:
        schema = json.loads(text)
    except RecursionError:
        return "it nests too deep to be inspected"
    except ValueError:
        return None  # not JSON: Helm refuses it with its own message, reading nothing
    for node in _schemas(schema):
        why = _node_escape(node)
        if why is not None:
            return why
    return None


def _node_escape(node: dict[str, Any]) -> str | None:
    for key in REF_KEYWORDS:
        value = node.get(key)
        if isinstance(value, str) and not value.startswith("#"):
            return f'"{key}": "{value}" names a document outside the schema'
    for key in ID_KEYWORDS:
        value = node.get(key)
        if isinstance(value, str) and value and not value.startswith("#"):
            return f'"{key}": "{value}" moves the base that references resolve against'
    meta = node.get("$schema")
    if isinstance(meta, str) and meta not in KNOWN_METASCHEMAS:
        return f'"$schema": "{meta}" is not a draft the validator knows without fetching it'
    return None


def _schemas(root: Any) -> Iterator[dict[str, Any]]:
    """Every schema object in the document, iteratively (a schema may nest deeply)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        yield node
        stack.extend(node[k] for k in _SCHEMA_VALUED if k in node)
        for key in _SCHEMA_MAPS:
            if isinstance(node.get(key), dict):
                stack.extend(node[key].values())


def archive_escape(data: bytes) -> str | None:
    """Why a vendored subchart archive (`charts/x.tgz`) must be refused: a schema inside it that
    reaches outside, or an archive too large to inspect. None when it is safe to hand to Helm."""
    scanned = 0
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for member in tar:
                scanned += member.size
                if scanned > MAX_SCANNED_BYTES:
                    return f"larger than {MAX_SCANNED_BYTES >> 20} MiB unpacked, not inspected"
                if not member.isfile() or member.name.rsplit("/", 1)[-1] != SCHEMA_FILE:
                    continue
                if member.size > MAX_SCHEMA_BYTES:
                    return f"{member.name} is larger than {MAX_SCHEMA_BYTES >> 20} MiB"
                handle = tar.extractfile(member)
                why = schema_escape(handle.read().decode("utf-8", "replace")) if handle else None
                if why is not None:
                    return f"{member.name}: {why}"
    except (tarfile.TarError, OSError, EOFError, zlib.error):
        return None  # not an archive Helm can read either: it says so itself
    return None
