"""A schema's verdict on one object, as the fields Kubernetes would refuse or drop.

A null is never at fault: Kubernetes reads `key: null` (what `key:` renders to) as the field
unset, and drops it where a CRD's schema does not allow null. An object whose fields the API
server would drop is told apart from one it refuses: a field no schema defines is dropped (with a
warning, or refused where fields are validated strictly, as kubectl does by default); a value of
the wrong type, a missing required field, a value not among those allowed is refused."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

UNKNOWN, REJECTED = "unknown-field", "rejected-field"
# Past this many faults in one object, one more line says how many are left.
MAX_FAULTS_PER_OBJECT = 10
_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping",
}
_SHOWN_CHARS = 40
# The bounds a value must keep: whether each is a most (else a least), and what it counts.
_BOUNDS = {
    "minimum": (False, ""),
    "maximum": (True, ""),
    "multipleOf": (False, ""),
    "minLength": (False, " characters"),
    "maxLength": (True, " characters"),
    "minItems": (False, " items"),
    "maxItems": (True, " items"),
    "minProperties": (False, " entries"),
    "maxProperties": (True, " entries"),
}

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Fault:
    """One field at fault: `path` into the object, `field` as written for people
    (`spec.template.spec.containers[app].ports`), `problem` what is wrong with it."""

    rule: str
    path: Path
    field: str
    problem: str


def faults(errors: Iterable[Any], body: Mapping[str, Any]) -> tuple[Fault, ...]:
    """jsonschema's errors on `body`, as faults, sorted by field; each field once."""
    found: dict[tuple[str, str], Fault] = {}
    for error in errors:
        for fault in _faults(error, body):
            found.setdefault((fault.field, fault.rule), fault)
    return tuple(sorted(found.values(), key=lambda f: (f.field, f.rule)))


def _faults(error: Any, body: Mapping[str, Any]) -> list[Fault]:
    if error.instance is None:
        return []
    path: Path = tuple(error.absolute_path)
    kind = error.validator
    if kind == "additionalProperties" and isinstance(error.instance, Mapping):
        known = error.schema.get("properties") or {}
        return [
            _fault(UNKNOWN, (*path, key), body, "is not a field Kubernetes knows here")
            for key in error.instance
            if key not in known
        ]
    if kind == "required" and isinstance(error.instance, Mapping):
        return [
            _fault(REJECTED, (*path, key), body, "is required, and not set")
            for key in error.validator_value
            if key not in error.instance
        ]
    return [_fault(REJECTED, path, body, _problem(kind, error))]


def _problem(kind: str, error: Any) -> str:
    value = describe(error.instance)
    if kind == "type":
        return f"is {value}, where Kubernetes takes {_wanted(error.validator_value)}"
    if kind in ("oneOf", "anyOf"):
        wanted = [t for s in error.validator_value if isinstance(s, Mapping) for t in _types(s)]
        return (
            f"is {value}, where Kubernetes takes {_wanted(wanted) if wanted else 'another value'}"
        )
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in error.validator_value if v is not None)
        return f"is {value}, not one of {allowed}"
    if kind in _BOUNDS:
        return f"is {value}, {_bound(kind, error.validator_value, error.schema)}"
    return f"is {value}: {error.message[:200]}"


def _bound(kind: str, limit: Any, schema: Mapping[str, Any]) -> str:
    if kind == "multipleOf":
        return f"not a multiple of {limit}"
    most, unit = _BOUNDS[kind]
    exclusive = schema.get("exclusiveMaximum" if most else "exclusiveMinimum") is True
    bound = ("below " if most else "above ") if exclusive else ("at most " if most else "at least ")
    return f"where Kubernetes takes {bound}{limit}{unit}"


def _types(schema: Mapping[str, Any]) -> list[str]:
    kinds = schema.get("type")
    return [kinds] if isinstance(kinds, str) else list(kinds or ())


def _wanted(types: Any) -> str:
    names = [_TYPES.get(t, t) for t in ([types] if isinstance(types, str) else types)]
    names = list(dict.fromkeys(n for n in names if n != "null"))
    return " or ".join(names) if names else "another value"


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        shown = value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "…"
        return f"the string {shown!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return repr(value)


def _fault(rule: str, path: Path, body: Mapping[str, Any], problem: str) -> Fault:
    return Fault(rule, path, field_name(path, body), problem)


def field_name(path: Sequence[str | int], body: Mapping[str, Any]) -> str:
    """`spec.template.spec.containers[app].image`: a list item by its `name` where it has one
    (what stays the same when items are reordered), else by its index."""
    out = ""
    node: Any = body
    for step in path:
        if isinstance(step, int):
            item = node[step] if isinstance(node, list) and step < len(node) else None
            name = item.get("name") if isinstance(item, Mapping) else None
            out += (
                f"[{name}]"
                if isinstance(name, str) and name and not name.isdigit()
                else f"[{step}]"
            )
            node = item
        else:
            out += f".{step}" if out else str(step)
            node = node.get(step) if isinstance(node, Mapping) else None
    return out
