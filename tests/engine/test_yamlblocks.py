"""Block-by-block parsing gives exactly what the whole parse gives, and parses each block once."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.model.yaml import blocks as yamlblocks
from bot.model.yaml.blocks import load_mappings
from bot.model.yaml.errors import YAML_FAILURES

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


# Helm's toYaml writes a sequence at its key's indentation; hand-written templates indent it by 2.
PODSPEC = """spec:
  template:
    spec:
      initContainers:
        - name: init
          image: busybox
          resources:
            limits: {cpu: 100m}
      containers:
      - name: web
        image: "x:1"
        env:
          - {name: A, value: "1"}
        resources:
          limits: {cpu: 100m}
      - name: sidecar
        args:
        - --port=80
        ports:
        - containerPort: 80
          name: http
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
        PODSPEC,
        PODSPEC.rstrip("\n"),
        "a:\n- b: 1\n\n  # note\n\n# aside\n- c: 2\n  # last\n",  # comments, blank lines
        "a:\n- s: |\n    one\n\n    two\n- f: >-\n    folded\n    text\n\n- k: |+\n    kept\n\n",
        'a:\n- name: long\n    plain\n  q: "quoted\n    on"\n- name: b\n',  # multi-line scalars
        'a:\n- b: "x\n- c: y"\n',  # a quoted scalar over what looks like the next item
        "a:\n- b: [1,\n 2]\n",  # a flow collection continued under the item's keys
        "a:\n- b: 1\n  b: 2\n  c: 3\n  b: 4\n",  # a repeated key in an item
        "a:\n- yes: 1\n  1: 2\n  null: 3\n  on:\n    off: 4\n",  # the loader decides, in items too
        "a:\n- b: &x {c: 1}\n  d: [*x]\n",  # an anchor and its alias in two entries of an item
        "a:\n- b: &x {c: 1}\n- d: *x\n",  # ... in two items
        "a:\n- b: [&x 1, *x]\n",  # ... in one entry
        "a: &x 1\nb:\n- c: *x\n",  # ... outside the sequence
        "a:\n- b: 1\n- 2\n- {c: 3}\n- [4]\n- - 5\n-\n  d: 6\n-   e: 7\n",  # items not `- key:`
        'a:\n- "b": 1\n- c: 1\n',  # a quoted key
        'a:\n- b: 1\n"c": 2\n',  # at the key's indentation, a line that is neither item nor key
        "a:\n- name:\n  image: x\n- name: # no value\n",  # empty values
        "a:\n- b:\n  - c: 1\n    d:\n      - e: 2\n  f: 3\n",  # sequences in items, both styles
        "a:\n  b:\n  - c: 1\n  d: 2\n",  # an indentless sequence in a nested mapping
        "a:\n- b: 1\n---\nc:\n  - d: 2\n",  # documents
        "a: &x 1\n---\nb: &x 2\n",  # an anchor named again in another document
        "a: sh -c 'x && y 2>&1 && z 2>&1'\n",  # `&` that names no anchor
        "a: \n- b: 1\nc: # note\n- d: 2\n",  # after the key, a space; a comment
        "a:\n- b: x\ty\n",  # a tab: parsed whole
        # Breaks other than `\n`, a byte order mark: parsed whole (in text that is not ASCII
        # otherwise, as a CRD's prose quoting with `’` is, and in text that is).
        *(f'a:\n  b: "’x{c}y"\n  c: 1\n' for c in "\x85\u2028\u2029\ufeff"),
        *(f"a:\n  b: ’1{c}c: 2\nd: 3\n" for c in "\x85\u2028\u2029"),  # `c` a key of the document
        *(f'a:\n  b: "x{c}"\n  c: &y 1\nd: *y\n' for c in "\x85\u2028\u2029\ufeff\r"),
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
        "a:\n  b:\n - c: 1\n",  # an item shallower than its key
        "a:\n    - b: 1\n  - c: 2\n",  # items at two indentations
        "a:\n- b: 1\n - c: 2\n",
        "a:\n- b: 1\n  - c\n",
        "a:\n- b: 1\n   c: 2\n",
        "a:\n- b: *missing\n",
        'a:\n- b: "open\n- c: 1\n',
        "a:\n- b: 2001-13-45\n",  # a timestamp with no such month: ValueError, not YAMLError
        "a: &x 1\nb: &x 2\n",  # an anchor named twice, in two blocks
        "a:\n- b: &x 1\n- c: !!str &x 2\n",
        "a: [&x 1]\nb: {c: &x 2}\n",
        "a:\n  &x\n  b: 1\nc: &x-y 2\nd:  &x 3\n",
    ],
)
def test_errors_are_the_whole_parse_errors(text: str) -> None:
    with pytest.raises(YAML_FAILURES) as expected:
        whole(text)
    with pytest.raises(type(expected.value)) as found:
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


def test_an_unchanged_item_in_another_list_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    yamlblocks.clear_blocks()
    parsed: list[str] = []
    real = yamlblocks._parse
    monkeypatch.setattr(yamlblocks, "_parse", lambda text: parsed.append(text) or real(text))
    first = load_mappings(PODSPEC)
    seen = len(parsed)
    changed = PODSPEC.replace("- name: sidecar", "- name: proxy")
    second = load_mappings(changed)
    # Only the renamed container's first line is new: `web`, and `sidecar`'s other entries, are
    # not parsed again, and `web` is the very same mapping (memos keyed by identity find it).
    assert parsed[seen:] == ["        name: proxy\n"]
    web = [_dig(doc, "spec", "template", "spec", "containers", 0) for doc in (first[0], second[0])]
    assert web[0] is web[1]


def _dig(node: Any, *path: str | int) -> Any:
    for step in path:
        node = node[step]
    return node


# Documents as Kubernetes manifests and chart authors write them, with the YAML that block cutting
# must not get wrong: odd scalars, multi-line values, items that are not mappings, comments at any
# indentation; then, in some, a line or two put anywhere (an anchor, an alias, a stray item, an open
# quote, a tab, a merge key) that may break them: the block parse must fail as the whole parse does.
KEYS = ["name", "image", "env", "a", "b", "x.y/z", "k-8", "yes", "1", "1e3", "null", "on"] * 2
KEYS += ["a b", '"q"', "'s'"]  # keys that are not plain: no cut at them
# After a `key:` over a nested block: mostly nothing; a space (still cut); a comment (left whole).
HEAD_ENDS = [""] * 8 + [" ", " # c"]
SCALARS = [
    *("web", "yes", "No", "1e3", "0o12", "0x1F", "012", "~", "", "100m", "-.5", ".inf", "a - b"),
    *('"a: b"', "'x'", "'it''s'", '"- x"', "x # note", "!!str 1", "[1, yes, '2']", "{a: [x]}"),
    *("2001-12-14t21:59:43.10-05:00", "2002-12-14", "[]", "{}", "a && b 2>&1", "!!binary aGk="),
    "&a x",
    "both the pod & container *level*",  # a CRD's prose: `&` and `*`, no anchor
]
BLOCK_HEADS = ["|", "|-", "|+", ">", ">-", "|2"]
STEPS = [2, 2, 4]
INSERTS = [
    *("z: &a 1", "y: *a", "x: [&c 1, *c]", "- &a f: 1", "&a", "!!map", "? k", "<<: {}", "..."),
    *("- stray", "c: 1", "- e: 1", "a: - x", "b: a: b", 'b: "open', "c: [1,", "d: x\ty"),
    "f: 2002-13-14",
]


@st.composite
def _noise(draw: st.DrawFn, indent: int) -> list[str]:
    """Lines between entries and items: none, blank, or comments at any indentation."""
    return draw(
        st.sampled_from([[], [], [], [""], ["#c"], [" " * indent + "# note"], ["   # deep"]])
    )


@st.composite
def _value(draw: st.DrawFn, indent: int) -> list[str]:
    """A scalar or flow value after `key:` or `- `: its first line's text, then its other lines."""
    kind = draw(st.sampled_from([*SCALARS, "<block>", "<plain>", "<quoted>", "<flow>"]))
    deeper = " " * (indent + draw(st.sampled_from(STEPS))) if kind.startswith("<") else ""
    if kind == "<block>":
        body = draw(st.lists(st.sampled_from(["text", "", "  more", "- x", "#no"]), max_size=3))
        return [
            draw(st.sampled_from(BLOCK_HEADS)),
            *(deeper + line if line else "" for line in body),
        ]
    if kind == "<plain>":
        return ["first", f"{deeper}more"]
    if kind == "<quoted>":
        return ['"first', f'{deeper}- more: x"']
    if kind == "<flow>":
        return ["[1,", f"{deeper}2]"]
    return [kind]


@st.composite
def _mapping(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(_entry(indent, depth))
        lines += draw(_noise(indent))
    return lines


@st.composite
def _entry(draw: st.DrawFn, indent: int, depth: int) -> list[str]:
    head = " " * indent + draw(st.sampled_from(KEYS)) + ":"
    kind = draw(st.sampled_from(["value", "value", "map", "seq", "seq"] if depth else ["value"]))
    deeper = indent + draw(st.sampled_from(STEPS))
    if kind == "map":
        end = draw(st.sampled_from([*HEAD_ENDS, " !!map"]))
        return [head + end, *draw(_mapping(deeper, depth - 1))]
    if kind == "seq":  # at the key's indentation (toYaml) or deeper (by hand)
        dash = indent + draw(st.sampled_from([0, 2]))
        end = draw(st.sampled_from([*HEAD_ENDS, " !!seq"]))
        return [head + end, *draw(_sequence(dash, depth - 1))]
    first, *rest = draw(_value(indent))
    if draw(st.sampled_from([False] * 5 + [True])):  # the value on the next line
        return [head, " " * deeper + first, *rest]
    return [f"{head} {first}".rstrip(" "), *rest]


@st.composite
def _sequence(draw: st.DrawFn, dash: int, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        lines += draw(_item(dash, depth))
        lines += draw(_noise(dash))
    return lines


@st.composite
def _item(draw: st.DrawFn, dash: int, depth: int) -> list[str]:
    pad = " " * dash
    kind = draw(st.sampled_from(["map"] * 16 + ["value", "nested", "alone", "wide"]))
    if kind == "value":
        first, *rest = draw(_value(dash))
        return [f"{pad}- {first}".rstrip(" "), *rest]
    if kind == "nested":  # `- - x`: a sequence in a sequence
        body = draw(_sequence(dash + 2, depth))
        return [f"{pad}- {body[0][dash + 2 :]}", *body[1:]]
    if kind == "alone":  # `-` on its own line, the mapping under it
        return [f"{pad}-", *draw(_mapping(dash + 2, depth))]
    if kind == "wide":  # `-   key:`: the mapping's keys further from the dash
        body = draw(_mapping(dash + 4, depth))
        return [f"{pad}-   {body[0][dash + 4 :]}", *body[1:]]
    body = draw(_mapping(dash + 2, depth))
    return [f"{pad}- {body[0][dash + 2 :]}", *body[1:]]


@st.composite
def _documents(draw: st.DrawFn) -> str:
    """One to three documents, mostly mappings; in a few, lines put anywhere."""
    # Weighted by repeating a choice: hypothesis draws an integer's bounds far more often than
    # the values between them.
    lines = ["---"] if draw(st.booleans()) else []
    for _ in range(draw(st.integers(1, 3))):
        mapping = draw(st.sampled_from([True] * 9 + [False]))
        lines += draw(_mapping(0, 2)) if mapping else ["- not a mapping"]
        lines.append(draw(st.sampled_from(["---"] * 9 + ["--- # c", "...\n---"])))
    lines.pop()
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        line = " " * draw(st.integers(0, 6)) + draw(st.sampled_from(INSERTS))
        lines.insert(draw(st.integers(0, len(lines))), line)
    text = "\n".join(lines)
    return text + "\n" if draw(st.booleans()) else text


@settings(
    max_examples=100,
    deadline=None,
    database=None,  # no saved examples between runs; a failure prints its reproduction blob
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_documents())
def test_any_text_parses_as_the_whole_parse(text: str) -> None:
    # The block cache is kept between examples: what one example cached must hold for the next.
    try:
        expected = whole(text)
    except YAML_FAILURES as error:
        with pytest.raises(type(error)) as found:
            load_mappings(text)
        assert str(found.value) == str(error)
        return
    assert repr(load_mappings(text)) == repr(expected)


@pytest.mark.parametrize(
    ("item", "levels"), [("k{i}:\n", 400), ("- k{i}:\n", 300)], ids=["mappings", "lists"]
)
def test_nesting_deeper_than_the_cuts_go_is_parsed_whole_not_refused(
    item: str, levels: int
) -> None:
    # libyaml parses up to 1,000 levels without recursing; cutting these would pass the recursion
    # limit (a few frames a level), and a RecursionError would read as invalid YAML.
    yamlblocks.clear_blocks()
    lines = ["top:\n"] + ["  " * (i + 1) + item.format(i=i) for i in range(levels)]
    text = "".join(lines) + "  " * (levels + 2) + "leaf: 1\n"
    assert repr(load_mappings(text)) == repr(whole(text))


def test_the_yaml_value_tag_reads_as_the_string_helm_reads() -> None:
    # prometheus-operator's CRDs list `- =` in an enum; PyYAML had no constructor for its tag.
    crd = "spec:\n  enum:\n  - =\n  - '!='\n  op: =\n"
    assert load_mappings(crd) == ({"spec": {"enum": ["=", "!="], "op": "="}},)


SIMPLE_LINES = [
    *("a: yes", "a: 1:30", "a: 2002-12-14", "a: ~", "a: =", "yes: x", "1: x", "null: x"),
    *("a: b # c", "a: b ", "a:  b", "a: 'x'", "a: ...x", "a: @x", "a: x: y", "a:b: c", "a: -1"),
    *("a: .inf", "a: 0o12", "a: 1_000", "a: (x", "a: b,c", "a: x~y", "    name: web", "a:", "a"),
    *("helm.sh/chart: kube-prometheus-stack-45.1.0", "description: a b. c (d)", "k" * 2000 + ": v"),
]


@pytest.mark.parametrize("line", SIMPLE_LINES)
def test_a_simple_line_reads_as_the_loader_reads_it(line: str) -> None:
    for text in (line, line + "\n"):
        found = yamlblocks._simple_entry(text)
        if found is not None:
            assert repr(found) == repr(yaml.load(text, Loader=yamlblocks.LOADER))  # noqa: S506


@settings(max_examples=500, deadline=None, database=None, print_blob=True)
@given(st.text(alphabet="ab1.-_:/ #'\"@%~=()[],!&*|>?yesnoYN0x\t", max_size=24))
def test_any_line_the_fast_path_reads_reads_as_the_loader_reads_it(line: str) -> None:
    found = yamlblocks._simple_entry(line + "\n")
    if found is None:
        return
    assert repr(found) == repr(yaml.load(line + "\n", Loader=yamlblocks.LOADER))  # noqa: S506
