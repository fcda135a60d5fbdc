"""JSON Schema made Python closures, for the few keywords Kubernetes' schemas use, so that checking an
object costs a walk of it and nothing more.

jsonschema interprets a schema anew at every node (a validator object per step, a registry lookup
per `$ref`): 3 ms for a Deployment, seven times a chart's renders on the benchmark. The API's
definitions use `type`, `properties`, `additionalProperties`, `required`, `items`, `enum`, `oneOf`
and `$ref` (local ones), and the CRD schemas checks/kube/crds.py makes also the numeric, length and
size bounds and `anyOf`: each becomes a closure once, a `$ref` a lookup of the closure its
definition became (so recursive definitions cost nothing more). The errors are what jsonschema
reports for the same keywords (its `validator`, `absolute_path`, `instance`, `validator_value`,
`schema`), which checks/kube/fields.py reads the same way; a schema using any other keyword is
`Unsupported`, and its kind is left to jsonschema itself (checks/kube/schemas.py).

Draft 2020-12's rules for these keywords, with OpenAPI 3.0's boolean `exclusiveMinimum` and
`exclusiveMaximum` (they qualify `minimum` and `maximum`). A boolean is no integer or number; a
float with no fraction is an integer, as for jsonschema since draft 6 and for the API server."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from bot.lru import IdentitiesMemo

Path = tuple[str | int, ...]
# Mappings whose errors are kept per compiler, by identity (each holds its mapping): enough for a
# large chart's objects at both sides and on every profile.
SUBTREES = 32768
Check = Callable[[Any, Path, list["SchemaError"]], None]
# Said of the data, never checked: what jsonschema does not assert either (formats, by default).
ANNOTATIONS = frozenset({"description", "format", "title", "default", "example", "$schema", "$id"})
_TYPES = frozenset({"null", "boolean", "string", "object", "array", "number", "integer"})
_PLAIN: dict[str, type] = {"boolean": bool, "string": str, "object": dict, "array": list}


class Unsupported(Exception):
    """A schema with a keyword this does not compile: the message names it."""


@dataclass(frozen=True)
class SchemaError:
    """One keyword's failure, shaped as jsonschema's ValidationError is where fields.py reads it."""

    validator: str
    absolute_path: Path
    instance: Any
    validator_value: Any
    schema: Mapping[str, Any]
    message: str = ""


@dataclass
class Compiler:
    """Compiles the schemas of one document of definitions (`$defs`, referred to as
    `{root}#/$defs/NAME` or `#/$defs/NAME`), each definition once."""

    definitions: Mapping[str, Any] = field(default_factory=dict)
    root: str = ""
    subtrees: IdentitiesMemo[tuple[SchemaError, ...]] = field(
        default_factory=lambda: IdentitiesMemo(SUBTREES)
    )
    _compiled: dict[str, Check] = field(default_factory=dict)

    def kind(self, name: str) -> Check:
        """The check of definition `name`'s objects: each definition it reaches is compiled the
        first time an object reaches it (a Deployment's schema reaches some 200, of which a chart's
        objects use a tenth). A keyword not compiled raises Unsupported then."""
        return self.reference(f"#/$defs/{name}")

    def definition(self, name: str) -> Check:
        found = self._compiled.get(name)
        if found is None:
            found = self._remembered(name, self.compile(self.definitions[name]))
            self._compiled[name] = found
        return found

    def _remembered(self, name: str, check: Check) -> Check:
        """`check`, whose errors on a mapping are kept by the mapping's identity: renders share
        the parsed blocks their YAML has in common (a Deployment's pod template is one object in
        every profile that renders it alike), and each is checked once."""
        memo = self.subtrees

        def errors(value: dict[str, Any]) -> tuple[SchemaError, ...]:
            found: list[SchemaError] = []
            check(value, (), found)
            return tuple(found)

        def remembered(value: Any, path: Path, out: list[SchemaError]) -> None:
            if type(value) is not dict:
                check(value, path, out)
                return
            for error in memo.get_or_make((value,), name, lambda: errors(value)):
                out.append(replace(error, absolute_path=path + error.absolute_path))

        return remembered

    def compile(self, schema: Any) -> Check:
        if not isinstance(schema, Mapping):
            raise Unsupported(f"a schema that is not a mapping: {schema!r}"[:200])
        unknown = [k for k in schema if k not in _KEYWORDS and k not in ANNOTATIONS]
        if unknown := [k for k in unknown if not k.startswith("x-")]:
            raise Unsupported(f"keyword {unknown[0]!r}")
        made = [make(self, schema) for key, make in _KEYWORDS.items() if key in schema]
        checks = [c for c in made if c is not None]
        if len(checks) == 1:
            return checks[0]

        def all_of(value: Any, path: Path, out: list[SchemaError]) -> None:
            for check in checks:
                check(value, path, out)

        return all_of

    def reference(self, ref: str) -> Check:
        local = ref.removeprefix(self.root)
        if not local.startswith("#/$defs/") or local[8:] not in self.definitions:
            raise Unsupported(f"$ref {ref!r}")
        name = local[8:]
        made: list[Check] = []

        def lazily(value: Any, path: Path, out: list[SchemaError]) -> None:
            if not made:
                made.append(self.definition(name))
            made[0](value, path, out)

        return lazily


def _ref(c: Compiler, schema: Mapping[str, Any]) -> Check:
    return c.reference(schema["$ref"])


def _type(c: Compiler, schema: Mapping[str, Any]) -> Check:
    wanted = schema["type"]
    names = frozenset([wanted] if isinstance(wanted, str) else wanted)
    if not names <= _TYPES:
        raise Unsupported(f"type {wanted!r}")
    # One isinstance for the usual types, then the numbers' own rules (the check runs per node).
    plain = tuple(cls for name, cls in _PLAIN.items() if name in names)
    null, number, integer = "null" in names, "number" in names, "integer" in names

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        if value is None:
            fits = null
        else:
            fits = isinstance(value, plain) or _numeric(value, number, integer)
        if not fits:
            out.append(SchemaError("type", path, value, wanted, schema))

    return check


def _numeric(value: Any, number: bool, integer: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return number or (integer and (isinstance(value, int) or value.is_integer()))


def _properties(c: Compiler, schema: Mapping[str, Any]) -> Check:
    children = {str(k): c.compile(v) for k, v in schema["properties"].items()}

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                known = children.get(key)
                if known is not None:
                    known(child, (*path, key), out)

    return check


def _additional(c: Compiler, schema: Mapping[str, Any]) -> Check | None:
    extra = schema["additionalProperties"]
    known = frozenset(schema.get("properties") or ())
    if extra is True:
        return None
    if extra is False:

        def closed(value: Any, path: Path, out: list[SchemaError]) -> None:
            if isinstance(value, dict) and not known.issuperset(value):
                out.append(SchemaError("additionalProperties", path, value, False, schema))

        return closed
    each = c.compile(extra)

    def values(value: Any, path: Path, out: list[SchemaError]) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                if key not in known:
                    each(child, (*path, key), out)

    return values


def _required(c: Compiler, schema: Mapping[str, Any]) -> Check:
    names = tuple(schema["required"])

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        if isinstance(value, dict) and any(n not in value for n in names):
            out.append(SchemaError("required", path, value, names, schema))

    return check


def _items(c: Compiler, schema: Mapping[str, Any]) -> Check:
    each = c.compile(schema["items"])

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        if isinstance(value, list):
            for index, item in enumerate(value):
                each(item, (*path, index), out)

    return check


def _enum(c: Compiler, schema: Mapping[str, Any]) -> Check:
    allowed = list(schema["enum"])

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        if not any(_equal(value, a) for a in allowed):
            out.append(SchemaError("enum", path, value, allowed, schema))

    return check


def _equal(one: Any, other: Any) -> bool:
    """JSON's equality: `true` is not `1`."""
    if isinstance(one, bool) or isinstance(other, bool):
        return isinstance(one, bool) and isinstance(other, bool) and one == other
    return bool(one == other)


def _one_of(c: Compiler, schema: Mapping[str, Any]) -> Check:
    return _junction(c, schema, "oneOf", lambda passed: passed == 1)


def _any_of(c: Compiler, schema: Mapping[str, Any]) -> Check:
    return _junction(c, schema, "anyOf", lambda passed: passed >= 1)


def _junction(
    c: Compiler, schema: Mapping[str, Any], keyword: str, ok: Callable[[int], bool]
) -> Check:
    branches = [c.compile(s) for s in schema[keyword]]

    def check(value: Any, path: Path, out: list[SchemaError]) -> None:
        passed = 0
        for branch in branches:
            found: list[SchemaError] = []
            branch(value, path, found)
            passed += not found
        if not ok(passed):
            out.append(SchemaError(keyword, path, value, schema[keyword], schema))

    return check


def _bound(keyword: str, test: Callable[[Any, Any, Mapping[str, Any]], bool]) -> Any:
    def make(c: Compiler, schema: Mapping[str, Any]) -> Check:
        limit = schema[keyword]

        def check(value: Any, path: Path, out: list[SchemaError]) -> None:
            if not test(value, limit, schema):
                message = f"{keyword} {limit}"
                out.append(SchemaError(keyword, path, value, limit, schema, message))

        return check

    return make


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _minimum(v: Any, limit: Any, s: Mapping[str, Any]) -> bool:
    return not _number(v) or (v > limit if s.get("exclusiveMinimum") is True else v >= limit)


def _maximum(v: Any, limit: Any, s: Mapping[str, Any]) -> bool:
    return not _number(v) or (v < limit if s.get("exclusiveMaximum") is True else v <= limit)


def _multiple(v: Any, limit: Any, s: Mapping[str, Any]) -> bool:
    if not _number(v) or not limit:
        return True
    quotient = v / limit
    return float(quotient).is_integer()


def _sized(kind: type[Sized], most: bool) -> Callable[[Any, Any, Mapping[str, Any]], bool]:
    def test(v: Any, limit: Any, s: Mapping[str, Any]) -> bool:
        if not isinstance(v, kind):
            return True
        size = len(v)
        return size <= limit if most else size >= limit

    return test


def _flag(c: Compiler, schema: Mapping[str, Any]) -> None:
    """`exclusiveMinimum: true` qualifies `minimum` (OpenAPI 3.0); a number form is not compiled."""
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        if key in schema and not isinstance(schema[key], bool):
            raise Unsupported(f"{key} {schema[key]!r}")


_KEYWORDS: dict[str, Callable[[Compiler, Mapping[str, Any]], Check | None]] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "required": _required,
    "properties": _properties,
    "additionalProperties": _additional,
    "items": _items,
    "oneOf": _one_of,
    "anyOf": _any_of,
    "minimum": _bound("minimum", _minimum),
    "maximum": _bound("maximum", _maximum),
    "exclusiveMinimum": _flag,
    "exclusiveMaximum": _flag,
    "multipleOf": _bound("multipleOf", _multiple),
    "minLength": _bound("minLength", _sized(str, most=False)),
    "maxLength": _bound("maxLength", _sized(str, most=True)),
    "minItems": _bound("minItems", _sized(list, most=False)),
    "maxItems": _bound("maxItems", _sized(list, most=True)),
    "minProperties": _bound("minProperties", _sized(dict, most=False)),
    "maxProperties": _bound("maxProperties", _sized(dict, most=True)),
}


@dataclass(frozen=True)
class Checker:
    """What checks one kind's objects: its compiled schema, and where that meets a keyword it does
    not compile, a jsonschema validator of the whole schema (`fallback` makes it)."""

    check: Check
    fallback: Callable[[], Any] | None = None

    def errors(self, value: Any) -> Sequence[Any]:
        out: list[SchemaError] = []
        try:
            self.check(value, (), out)
        except Unsupported:
            if self.fallback is None:
                raise
            return list(self.fallback().iter_errors(value))
        return out
