"""checks/kube/compiled.py against jsonschema itself, the oracle: on Kubernetes' own schemas (v1.30)
and a CRD's structural schema, objects mutated at random are at fault in exactly the fields
jsonschema finds at fault; a schema with a keyword the compiler does not take is jsonschema's."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from referencing import Registry, Resource

from checks.kube.compiled import Checker, Compiler
from checks.kube.crds import structural
from checks.kube.fields import faults
from checks.kube.schemas import api_schemas

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a": "b"}},
    "spec": {
        "replicas": 2,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}},
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "example/web:1",
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "env": [{"name": "A", "value": "1"}],
                        "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                    }
                ],
                "volumes": [{"name": "v", "configMap": {"name": "cm"}}],
            },
        },
    },
}
CRD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10, "exclusiveMaximum": True},
                "name": {"type": "string", "minLength": 2, "maxLength": 8},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "mode": {"type": "string", "enum": ["a", "b"]},
            },
        }
    },
}
WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w"},
    "spec": {
        "size": 3,
        "name": "abc",
        "port": 80,
        "tags": ["x"],
        "labels": {"k": "v"},
        "mode": "a",
    },
}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2)
    ),
    max_leaves=4,
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=32)


def paths(node: Any, at: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield at
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*at, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*at, index))


def mutated(base: dict[str, Any], data: st.DataObject, values: st.SearchStrategy[Any]) -> Any:
    body = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(paths(body))[1:]))
        parent: Any = body
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["bogus", "name", "port", "size"]))] = data.draw(
                values
            )
        else:
            parent[path[-1]] = data.draw(values)
    return body


def fault_set(errors: Any, body: Any) -> set[tuple[str, str, str]]:
    return {(f.rule, f.field, f.problem) for f in faults(errors, body)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_compiled_api_schema_finds_what_jsonschema_finds(data: st.DataObject) -> None:
    schemas = api_schemas((1, 30))
    assert schemas is not None
    body = mutated(DEPLOYMENT, data, JSON | FLOATS)
    name = schemas.kinds[("apps", "v1", "Deployment")]
    oracle = jsonschema.Draft202012Validator(
        {"$ref": f"{schemas.root}#/$defs/{name}"}, registry=schemas.registry()
    )
    compiled = schemas.validator(("apps", "v1", "Deployment"))
    assert compiled is not None
    assert fault_set(compiled.errors(body), body) == fault_set(oracle.iter_errors(body), body)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_compiled_crd_schema_finds_what_jsonschema_finds(data: st.DataObject) -> None:
    # Integers only: draft 4, which OpenAPI 3.0 follows, takes no float as an integer, and the API
    # server (and the compiler) takes 3.0 as one.
    root = structural(CRD_SCHEMA, 0)
    body = mutated(WIDGET, data, JSON)
    compiled = Checker(Compiler().compile(root))
    oracle = jsonschema.Draft4Validator(root)
    assert fault_set(compiled.errors(body), body) == fault_set(oracle.iter_errors(body), body)


def test_a_schema_with_a_keyword_not_compiled_is_left_to_jsonschema() -> None:
    definitions = {
        "Thing": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^a"}}}
    }
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:test"}
    document["$defs"] = definitions
    registry = Registry().with_resource("urn:test", Resource.from_contents(document))
    fallback = jsonschema.Draft202012Validator({"$ref": "urn:test#/$defs/Thing"}, registry=registry)
    checker = Checker(Compiler(definitions, "urn:test").kind("Thing"), lambda: fallback)
    body = {"id": "b"}
    assert fault_set(checker.errors(body), body) == {
        ("rejected-field", "id", "is the string 'b': 'b' does not match '^a'")
    }


def test_structural_schemas_prune_as_the_api_server_does() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kept": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "closed": {"type": "object", "properties": {"a": {"type": "string"}}},
            "free": {"type": "object"},
            "map": {"type": "object", "additionalProperties": {"type": "integer"}},
            "embedded": {"type": "object", "x-kubernetes-embedded-resource": True},
        },
    }
    checker = Checker(Compiler().compile(structural(schema, 0)))
    body = {
        "kept": {"anything": 1},
        "closed": {"a": "x", "b": 1},
        "free": {"c": 1},
        "map": {"n": 1, "m": "two"},
        "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {}, "spec": {}},
        "gone": True,
    }
    assert fault_set(checker.errors(body), body) == {
        ("unknown-field", "closed.b", "is not a field Kubernetes knows here"),
        ("unknown-field", "embedded.spec", "is not a field Kubernetes knows here"),
        ("unknown-field", "free.c", "is not a field Kubernetes knows here"),
        ("unknown-field", "gone", "is not a field Kubernetes knows here"),
        ("rejected-field", "map.m", "is the string 'two', where Kubernetes takes an integer"),
    }


def test_a_schema_nested_past_the_depth_cap_admits_anything_below() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "object", "properties": {"a": schema}}
    body: Any = 1
    for _ in range(200):
        body = {"a": body}
    checker = Checker(Compiler().compile(structural(schema, 0)))
    assert checker.errors(body) == []  # the string 200 levels down is past MAX_DEPTH
