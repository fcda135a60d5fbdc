"""docs/config.md from the config's models (bot/model/config_models.py): every key of
`.github/chart-review.yml` as a dotted path, its type, its default and its description, walked from
the same pydantic models that parse the file and generate docs/config.schema.json."""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bot.cli.docs_pages.markdown import code, table
from bot.cli.schema_docs import file_model
from bot.model.config import CONFIG_PATH
from checks import REGISTRY

# A fenced block whose first line names the file is a config: tests/cli/test_schema_docs.py holds
# every such block of the docs to the schema and to the bot's parser.
EXAMPLE = f"""\
```yaml
# {CONFIG_PATH}
kube_version: "1.29"
profiles:
  - {{name: openshift, chart: client, values_file: client/ci/oc-values.yaml, arbitrary_uid: true}}
checks:
  qos: {{severity: {{downgrade: warning}}}}
  headings: {{enabled: false}}
version:
  bump: {{charts/legacy: at-release, "*": per-change}}
probes:
  forbid: {{"Deployment/*jobs-manager*": [liveness, startup]}}
```"""

INTRO = f"""\
Read at the PR's *base*, so a PR cannot switch its own checks off. Unknown keys and wrong types are
errors that name the key and line. Every key is optional; for example:

{EXAMPLE}

Its JSON Schema, for editors and for checking the file before a PR, is
[config.schema.json](config.schema.json), generated from the same models; a test fails when it is
stale, and every example config in the README, in docs/ and in examples/ is validated against it
and read by the bot's own parser. The schema says the keys, types and check names; a few rules
only the bot applies (a `kube_version` it can read, the `links.repositories` patterns, a
dependency URL's scheme)."""


def body() -> str:
    rows = [
        (code(key), kind, default, text) for key, kind, default, text in _keys(file_model(), "")
    ]
    tops = [o.name for o in REGISTRY.options if o.top_level]
    parts = [
        f"# The config file: `{CONFIG_PATH}`",
        INTRO,
        "## Every key",
        table(["key", "type", "default", "meaning"], rows),
        f"`<check>` is one of {', '.join(code(n) for n in _check_names())}; "
        + f"{' and '.join(code(n) for n in tops)} take theirs at the top level.",
    ]
    return "\n\n".join(p.rstrip("\n") for p in parts) + "\n"


def _check_names() -> list[str]:
    return sorted(o.name for o in REGISTRY.options if not o.top_level)


def _keys(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, str, str, str]]:
    for name, field in model.model_fields.items():
        key = prefix + name
        yield key, _type(field.annotation), _default(field), field.description or ""
        nested = _nested(field.annotation)
        if nested is not None:
            inner, suffix = nested
            yield from _keys(inner, key + suffix + ".")


def _nested(annotation: Any) -> tuple[type[BaseModel], str] | None:
    """The model a key holds, directly, in a list (`key[].x`) or as a map's values
    (`key.<check>.x`), and how its own keys are spelled below it."""
    for arg in _members(annotation):
        if _is_model(arg):
            return arg, ""
        origin, args = get_origin(arg), get_args(arg)
        if origin is list and args and _is_model(args[0]):
            return args[0], "[]"
        if origin is dict and len(args) == 2 and _is_model(args[1]):
            return args[1], ".<check>"
    return None


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _members(annotation: Any) -> tuple[Any, ...]:
    if get_origin(annotation) in (Union, types.UnionType):
        return get_args(annotation)
    return (annotation,)


def _type(annotation: Any) -> str:
    """A key's type in the file's words: YAML's, not Python's."""
    kinds = [_one_type(a) for a in _members(annotation) if a is not type(None)]
    return " or ".join(kinds)


def _one_type(annotation: Any) -> str:
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(code(str(a)) for a in args)  # the table's cell escapes the pipes
    if origin is list:
        return f"list of {_plural(args[0])}"
    if origin is dict:
        return f"map of {_plural(args[0])} to {_plural(args[1])}"
    if _is_model(annotation):
        return "mapping"
    return {str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        annotation, "anything"
    )


def _plural(annotation: Any) -> str:
    said = _type(annotation)
    if said == "anything":
        return said
    return said + "s" if said in ("string", "boolean", "integer", "mapping") else f"({said})"


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    if isinstance(value, BaseModel):
        return ""  # its keys say theirs
    if value is None:
        return "unset"
    if isinstance(value, str):
        return code(value)
    return code(json.dumps(value, ensure_ascii=False))
