"""The diff's YAML writer against PyYAML's own dump: the same text to the character, whether the
writer wrote it or handed the object to PyYAML."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.model.yaml.dump import WIDE, direct_lines, dump_lines


class Plain(yaml.CSafeDumper):  # the representer and resolver as PyYAML has them
    def ignore_aliases(self, data: object) -> bool:
        return True


def _block(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar(
        "tag:yaml.org,2002:str", value, style="|" if "\n" in value else None
    )


Plain.add_representer(str, _block)


def pyyaml(body: Any) -> str:
    return yaml.dump(body, Dumper=Plain, sort_keys=True, default_flow_style=False, width=WIDE)


DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web", "tier": "2"}},
    "spec": {
        "replicas": 3,
        "paused": False,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"annotations": {"checksum/config": "0123abcd", "empty": ""}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "ghcr.io/example/web:1.2.3@sha256:00ff",
                        "args": ["--port=8080", "--log-level", "info", "a b c", "x,y"],
                        "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                        "env": [{"name": "ON", "value": "on"}, {"name": "N", "value": "8080"}],
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {}},
                        "securityContext": {"runAsUser": 1000, "readOnlyRootFilesystem": True},
                        "volumeMounts": [],
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                    }
                ],
                "nodeSelector": None,
                "tolerations": [[{"key": "a"}], [], {}, "x"],
                "ratio": 0.5,
            },
        },
    },
}


def test_a_manifest_is_written_directly_as_pyyaml_writes_it() -> None:
    lines = direct_lines(DEPLOYMENT)
    assert lines is not None  # names, images, ports, lists of lists: none handed to PyYAML
    assert "".join(lines) == pyyaml(DEPLOYMENT)
    assert "      - args:\n" in lines  # a mapping's list is not indented under its key
    assert "    tier: '2'\n" in lines  # a number as a string stays quoted


@pytest.mark.parametrize(
    "value",
    [
        "...",
        "...x",
        "a: b",
        "a #b",
        "a#b",
        "12:30",
        "1_000",
        "0o17",
        "+1",
        "-1",
        ".5",
        ".inf",
        "Yes",
        "NULL",
        "~",
        "=",
        "<<",
        "a  b",
        "(x)",
        "x:",
        "x:y",
        "/",
        "é",
        "\t",
        "",
        "x" * 300,
        "y" * 127,
        -0.0,
        0.0,
        1e17,
        float("inf"),
        2**64,
        True,
        None,
    ],
)
def test_each_scalar_as_a_key_a_value_and_an_item(value: Any) -> None:
    body = {"k": value, "items": [value, [value]], "nested": {"deep": {"k": value}}}
    if isinstance(value, str):
        body[value] = "as a key"
    assert "".join(dump_lines(body)) == pyyaml(body)


def test_strings_of_several_lines_are_blocks_indented_where_they_stand() -> None:
    texts = [
        "server {\n  listen 80;\n}\n",  # `|`
        "no final break\nhere",  # `|-`
        "  indented first\nline\n",  # `|2`: an indentation indicator
        "a\n\n  b\n",  # a blank line inside
        "trailing space \nline\n",  # no block allowed: quoted on one line
        "tab\there\n",
    ]
    body = {
        "data": {f"file{i}.conf": text for i, text in enumerate(texts)},
        "spec": {"containers": [{"args": texts, "name": "x"}], "nested": [texts[:2]]},
        "top": texts[0],
    }
    lines = direct_lines(body)
    assert lines is not None
    assert "".join(lines) == pyyaml(body)
    assert "  file0.conf: |\n" in lines and "    server {\n" in lines
    assert "  - args:\n" in lines and "    - |\n" in lines and "      server {\n" in lines


# What a block of several lines may hold that changes how libyaml writes it: spaces before a break
# or at the end (then quoted), leading spaces or breaks (an indentation indicator), final breaks
# (`|`, `|-`, `|+`), characters it escapes.
BLOCK_CHARS = st.sampled_from([" ", "\n", "\n", "a", "#", ":", "-", "|", "'", '"', "\t", "é", "\r"])


@settings(max_examples=400, deadline=None, database=None, print_blob=True)
@given(st.text(BLOCK_CHARS, min_size=1, max_size=24).map(lambda text: text + "\n" + text[::-1]))
def test_blocks_of_several_lines_as_pyyaml_writes_them(text: str) -> None:
    body = {"k": text, "long": text * 12, "items": [text, {"deep": text * 12}]}
    assert "".join(dump_lines(body)) == pyyaml(body)


def test_what_the_writer_does_not_vouch_for_is_pyyamls() -> None:
    import datetime

    for body in (
        {"a": "line breaks kept\n\n", "b": 1},  # `|+`: the document then ends with `...`
        {"k" * 200: 1},  # a complex key (`? k...`)
        {"when": datetime.date(2024, 2, 29)},
        {1: "an int key"},
        {},
    ):
        assert direct_lines(body) is None
        assert "".join(dump_lines(body)) == pyyaml(body)


_TOKENS = (
    "a", "Z", "web", "0", "42", "1.5", "1e3", "0x1F", " ", "  ", ":", ": ", "#", " #", "-", "- ",
    "?", "'", '"', "\\", ".", "...", "~", "!", "&", "*", "%", "@", "`", ",", "[", "]", "{", "}",
    "|", ">", "=", "<<", "yes", "null", "true", "12:30", "/", "é", "\u2028", "\t", "_", "(", ")",
    "\n", "\n\n", "\n  ", " \n", "\nx",
)  # fmt: skip


def _scalar(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.6:
        return "".join(rng.choice(_TOKENS) for _ in range(rng.randint(0, 4)))
    if roll < 0.7:
        return rng.randint(-(2**40), 2**40)
    if roll < 0.8:
        return rng.choice([0.0, -0.0, 1.5, 1e17, 1e-7, float("inf"), float("-inf")])
    return rng.choice([True, False, None])


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return _scalar(rng)
    if roll < 0.75:
        return {str(_scalar(rng)): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_random_documents_are_dumped_as_pyyaml_dumps_them() -> None:
    rng = random.Random(20261201)
    direct = 0
    for _ in range(3000):
        body = {str(_scalar(rng)): _value(rng, 0) for _ in range(rng.randint(1, 5))}
        direct += direct_lines(body) is not None
        assert "".join(dump_lines(body)) == pyyaml(body), body
    assert direct > 300  # the writer's own path is among them, not only PyYAML's


def test_a_subtree_written_before_is_reused_only_where_it_stands_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A CRD's next version shares its unchanged blocks with the one before: their lines are
    # written once, and a shared subtree elsewhere (another indentation, a list's item) is not
    # taken for them.
    from bot.model.yaml import dump

    schema = {f"field{i}": {"type": "string", "description": f"the {i}th"} for i in range(40)}
    old = {"spec": {"versions": [{"name": "v1", "schema": schema}], "group": "x.io"}}
    new = {"spec": {"versions": [{"name": "v1", "schema": schema}], "group": "y.io"}}
    moved = {"deeper": {"spec": {"schema": schema}}, "items": [schema, {"schema": schema}]}
    assert "".join(dump_lines(old)) == pyyaml(old)
    written: list[int] = []
    real = dump._mapping
    monkeypatch.setattr(dump, "_mapping", lambda v, *a: written.append(id(v)) or real(v, *a))
    assert "".join(dump_lines(new)) == pyyaml(new)
    assert id(schema) not in written  # its 120 lines: taken from the first dump
    assert "".join(dump_lines(moved)) == pyyaml(moved)
    assert id(schema) in written  # at other indentations: written there
