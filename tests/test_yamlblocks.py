"""Block-by-block parsing gives exactly what the whole parse gives, and parses each block once."""

from __future__ import annotations

import pytest
import yaml

from bot import yamlblocks
from bot.yamlblocks import load_mappings

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
      - name: web
        resources:
          limits: {cpu: 100m}
      script: |
        echo one

        echo two
"""


def whole(text: str) -> tuple[object, ...]:
    return tuple(d for d in yaml.load_all(text, Loader=yaml.CSafeLoader) if isinstance(d, dict))


@pytest.mark.parametrize(
    "text",
    [
        DEPLOYMENT.replace("{replicas}", "3"),
        DEPLOYMENT.replace("{replicas}", "3").rstrip("\n"),  # no line break after the last scalar
        "a: |+\n  kept\n\n\nb: 1\n",  # keep chomping: the blank lines belong to the scalar
        "a:\n  b: 1\n  b: 2\n  c: 3\na: {d: 4}\n",  # repeated keys: first place, last value
        "yes:\n  on: 1\n1:\n  null: ~\n",  # the loader decides what a key is
        "a: 1\n---\nb:\n  c: 2\n---\n- not a mapping\n",  # documents; non-mappings left out
        "a:\n  b: &x {c: 1}\n  d: *x\n",  # an anchor and its alias in one block
        "a:\n  b: &x {c: 1}\nd: *x\n",  # ... in two blocks: parsed whole
        "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",  # merge keys: parsed whole
        "# lead\na:\n  # note\n  b: 1\n\n  c: [1,\n    2]\n",
        "a:\n- 1\n- 2\nb:\n  - c: 1\n    d: 2\n",  # sequences at and below the key's indentation
    ],
)
def test_same_as_the_whole_parse(text: str) -> None:
    yamlblocks.clear_blocks()
    assert repr(load_mappings(text)) == repr(whole(text))  # repr: types and key order too


@pytest.mark.parametrize(
    "text",
    [
        "a:\n  b: 1\n c: 2\n",
        'a: "open\nb: 1\n',
        "a:\n  b: [1,\nc: 2\n",
        "a:\n  b: *missing\n",
    ],
)
def test_errors_are_the_whole_parse_errors(text: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        whole(text)
    with pytest.raises(yaml.YAMLError) as found:
        load_mappings(text)
    assert str(found.value) == str(expected.value)


def test_a_block_that_repeats_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    yamlblocks.clear_blocks()
    parsed: list[str] = []
    real = yamlblocks._parse
    monkeypatch.setattr(yamlblocks, "_parse", lambda text: parsed.append(text) or real(text))
    load_mappings(DEPLOYMENT.replace("{replicas}", "1"))
    first = len(parsed)
    load_mappings(DEPLOYMENT.replace("{replicas}", "2"))
    assert parsed[first:] == ["  replicas: 2\n"]
