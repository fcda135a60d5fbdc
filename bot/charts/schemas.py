"""A chart's `values.schema.json` must not reach outside the chart.

Helm validates values against the schema before rendering, and its JSON-schema compiler loads
whatever a reference names: `{"$ref": "file:///…/app.pem"}` made a check run print the key file's
first byte ("invalid character 'S'"), and `http://169.254.169.254/…` made one request per profile.
A relative reference resolves against the schema's own `file:///` address, so it reaches the root
file system too; an `$id` moves that base; a `$schema` naming an unknown meta-schema is fetched.
So only fragments (`#/definitions/x`) may be referenced, `$id` may only be a fragment, and
`$schema` only a draft the compiler has built in. A schema that breaks this is left out of the
archive (the chart is still rendered and reviewed, unvalidated, and the review says so); inside a
vendored subchart archive or a fetched dependency (or a subchart archive inside either, which Helm
validates too) it cannot be left out, so that chart is refused. Archives are read by the bounded
reader (bot/tarball/reader.py): one past its caps, or one Helm could not read, is refused as well.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.tarball.headers import ArchiveRefused, Unreadable
from bot.tarball.limits import LIMITS, mib
from bot.tarball.reader import Budget, Cost, Member, members

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
# The largest schema inspected (the chart's own, or one in an archive): the most Helm loads of one
# file. A larger one is never parsed here; it is left out, or its archive refused.
MAX_SCHEMA_BYTES = LIMITS.held_bytes
NOT_HANDED_ON = "refused, not handed to Helm"  # how every refused archive's reason ends
# Helm drops a UTF-8 byte order mark from every file it loads; Python's json refuses one.
BOM = "\ufeff"


def schema_escape(text: str) -> str | None:
    """Why this schema could reach outside the chart (the first offending keyword and value), or
    None when every reference stays inside it."""
    if len(text) > MAX_SCHEMA_BYTES:
        return f"it is larger than {mib(MAX_SCHEMA_BYTES)}, the most Helm loads of one file"
    try:
        schema = json.loads(text.removeprefix(BOM))
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


@dataclass(frozen=True)
class ArchiveVerdict:
    """What the pre-check says of one chart archive: why it is refused (None: safe to hand to
    Helm), and what reading it cost, which a chart's archives share (bot/tarball/limits.py)."""

    why: str | None
    cost: Cost


def archive_escape(data: bytes) -> str | None:
    """Why a chart archive (a vendored `charts/x.tgz`, a fetched dependency) must be refused, or
    None when it is safe to hand to Helm."""
    return archive_verdict(data).why


def archive_verdict(data: bytes) -> ArchiveVerdict:
    """A schema inside the archive, or inside a subchart archive in it, that reaches outside; an
    archive past the bounded reader's caps; one Helm could not read either: each is refused."""
    budget = Budget()
    try:
        for member in members(data, _is_small_schema, budget):
            if not _is_schema(member):
                continue
            if member.data is None:
                return ArchiveVerdict(
                    f"{member.location} is larger than {mib(MAX_SCHEMA_BYTES)}", budget.cost
                )
            why = schema_escape(member.data.decode("utf-8", "replace"))
            if why is not None:
                return ArchiveVerdict(f"{member.location}: {why}", budget.cost)
    except Unreadable as exc:
        return ArchiveVerdict(f"not a chart archive Helm can read ({exc})", budget.cost)
    except ArchiveRefused as exc:
        return ArchiveVerdict(str(exc), budget.cost)
    return ArchiveVerdict(None, budget.cost)


def _is_schema(member: Member) -> bool:
    """Any `values.schema.json` of the archive: the chart's, or an unpacked subchart's."""
    return member.path.rsplit("/", 1)[-1] == SCHEMA_FILE


def _is_small_schema(member: Member) -> bool:
    return _is_schema(member) and member.size <= MAX_SCHEMA_BYTES
