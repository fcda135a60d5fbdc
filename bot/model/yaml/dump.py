"""Parsed YAML back to text, as the rendered diff shows it: PyYAML's safe dump in block style, keys
sorted, one value a line, multi-line strings as `|` blocks, no anchors. The same text to the
character as `yaml.dump(value, Dumper=BlockDumper, sort_keys=True, default_flow_style=False,
width=WIDE)`.

A diff dumps every object a PR changes at both sides, and through PyYAML each scalar costs a node
and two calls from the C emitter back into the resolver: most of a review's diff. So what Helm's
manifests mostly hold (mappings and lists of names, numbers, images, paths) is written here
directly, each distinct scalar's text asked of PyYAML once (a multi-line string's block too,
indented where it stands, unless it is lines of printable ASCII, written here as libyaml would);
an object holding anything else (a key too long to be a simple key or on several lines, a date,
a type parsed YAML does not give) is dumped by PyYAML whole, so what this writes never differs
from it."""

from __future__ import annotations

import contextlib
import functools
import io
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from bot.lru import BoundedCache
from bot.model.yaml.plain import RESOLVED_MAX_CHARS, reads_as_itself, resolved
from bot.textlines import git_lines

# One value a line, however long: a folded line would make a one-word change look like several.
WIDE = 1 << 20
# libyaml writes a key longer than this as a complex key (`? key`); shorter ones are simple keys,
# written as values are (by bytes: what it counts).
_SIMPLE_KEY_BYTES = 128
# A line break to libyaml (written escaped, it still makes a key complex).
_BREAKS = re.compile("[\n\r\x85\u2028\u2029]").search
# Scalars longer than this are not remembered: a config file in a string would be held as a key.
_REMEMBERED_CHARS = 256


class _Unsure(Exception):
    """Something this writer does not vouch for: the object is dumped by PyYAML."""


def dump_lines(value: Mapping[Any, Any]) -> list[str]:
    """The dump of a mapping, line by line (each with its line break)."""
    lines = direct_lines(value)
    return lines if lines is not None else pyyaml_lines(value)


def direct_lines(value: Mapping[Any, Any]) -> list[str] | None:
    """The dump written here, or None where this does not vouch for every line of it."""
    if type(value) is not dict or not value:
        return None
    lines: list[str] = []
    try:
        _mapping(value, "", "", lines)
    except _Unsure:
        return None
    return lines


def _mapping(value: dict[Any, Any], first: str, indent: str, lines: list[str]) -> None:
    """Its entries, keys at `indent`, the first line led by `first` (a sequence item's dash)."""
    lead = first
    for key, item in _sorted(value):
        if type(key) is not str or len(key.encode()) >= _SIMPLE_KEY_BYTES or _BREAKS(key):
            raise _Unsure
        head = f"{lead}{_scalar(key)}:"
        lead = indent
        kind = type(item)
        if kind is dict:
            if item:
                lines.append(head + "\n")
                _remembered(_mapping, item, indent + "  ", lines)
            else:
                lines.append(head + " {}\n")
        elif kind is list:
            if item:
                lines.append(head + "\n")
                _remembered(_sequence, item, indent, lines)  # a mapping's list is not indented
            else:
                lines.append(head + " []\n")
        elif kind is str and "\n" in item:
            _block(head, item, indent, lines)
        else:
            lines.append(f"{head} {_scalar(item)}\n")


def _remembered(
    write: Callable[[Any, str, str, list[str]], None], value: Any, indent: str, lines: list[str]
) -> None:
    """`write(value, indent, indent, lines)` (a value under its key), its lines remembered by the
    value's identity where they are many: an object parsed block by block shares every block
    whose text did not change with the render before, so a CRD's next version (a few descriptions
    changed) is mostly lines written already."""
    hit = _SUBTREES.get(id(value))
    if hit is not None and hit[0] is value and hit[1] == indent:
        lines.extend(hit[2])
        return
    start = len(lines)
    write(value, indent, indent, lines)
    if len(lines) - start >= _SUBTREE_MIN_LINES:
        _SUBTREES.put(id(value), (value, indent, tuple(lines[start:])))


# Written subtrees by identity (each entry holds its value, so no other object takes its id), the
# least recently used going first past a number of lines in all. A subtree's lines are counted at
# each level remembered, though its parent's hold the same strings: the bound is of references.
# A subtree of fewer lines is written again.
_SUBTREE_MIN_LINES = 64
_SUBTREE_MAX_LINES = 1_000_000
_SUBTREES: BoundedCache[int, tuple[Any, str, tuple[str, ...]]] = BoundedCache(
    _SUBTREE_MAX_LINES, lambda entry: len(entry[2])
)


def _sequence(value: list[Any], first: str, indent: str, lines: list[str]) -> None:
    """Its items, dashes at `indent`, the first line led by `first`."""
    lead = first
    inner = indent + "  "
    for item in value:
        dash = lead + "- "
        lead = indent
        kind = type(item)
        if kind is dict:
            if item:
                _mapping(item, dash, inner, lines)
            else:
                lines.append(dash + "{}\n")
        elif kind is list:
            if item:
                _sequence(item, dash, inner, lines)
            else:
                lines.append(dash + "[]\n")
        elif kind is str and "\n" in item:
            _block(dash[:-1], item, indent, lines)
        else:
            lines.append(f"{dash}{_scalar(item)}\n")


def _block(head: str, value: str, indent: str, lines: list[str]) -> None:
    """A string of several lines after `head` (`key:` or `-`, at `indent`): a `|` block, its lines
    indented two past `indent`, as libyaml writes it wherever it is; or, where the block style is
    not allowed (a line ending in a space, a tab), quoted on one line."""
    first, body = _literal(value) if len(value) > _REMEMBERED_CHARS else _short_literal(value)
    lines.append(f"{head} {first}\n")
    lines.extend(line if line == "\n" else indent + line for line in body)


@functools.lru_cache(maxsize=4096)
def _short_literal(value: str) -> tuple[str, tuple[str, ...]]:
    return _literal(value)


def _literal(value: str) -> tuple[str, tuple[str, ...]]:
    """The block's first line after `key: ` and its other lines, as PyYAML writes it under a key
    at the margin (two spaces in)."""
    plain = _plain_literal(value)
    if plain is not None:
        return plain
    written = pyyaml_lines({"k": value})
    first, *body = written
    if not first.startswith("k: ") or any(
        line != "\n" and not line.startswith("  ") for line in body
    ):
        raise _Unsure
    if body and not first.startswith("k: |"):
        raise _Unsure  # several lines, yet no block: a style this does not know
    # (A block keeping its final line breaks, `|+`, makes libyaml end the document with `...`
    # wherever the block is: its line above fails the indentation test, so PyYAML writes it.)
    return first[3:-1], tuple(body)


def _plain_literal(value: str) -> tuple[str, tuple[str, ...]] | None:
    """The block libyaml writes for a string of printable ASCII lines, written here: a CRD holds
    thousands of descriptions of several lines, each a PyYAML dump of its own otherwise (a new
    emitter and a parse of the result). libyaml quotes a string with a space before a break or at its end, and
    keeps two final breaks with `|+` (ending the document with `...`): those are left to it. A
    first line starting with a space or a break needs the indentation indicator (`|2`); no final
    break, the strip indicator (`|-`)."""
    if (
        "\n" not in value
        or _PRINTABLE_ASCII(value) is None
        or " \n" in value
        or value.endswith((" ", "\n\n"))
        or value == "\n"
    ):
        return None
    lines = value.split("\n")
    chomp = "-"
    if not lines[-1]:
        lines.pop()
        chomp = ""
    hint = "2" if value[0] in " \n" else ""
    return f"|{hint}{chomp}", tuple(f"  {line}\n" if line else "\n" for line in lines)


# Line breaks and what libyaml writes as it is (with `allow_unicode` off, as PyYAML's dump has it).
_PRINTABLE_ASCII = re.compile("[\n\x20-\x7e]*").fullmatch


def _sorted(value: dict[Any, Any]) -> list[tuple[Any, Any]]:
    items = list(value.items())
    with contextlib.suppress(TypeError):  # as _node: keys that cannot be sorted stay in order
        items.sort()
    return items


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        if len(value) > _REMEMBERED_CHARS:
            return _text(value)
        return _short_text(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is float:
        return _text(value)  # not remembered: 0.0 and -0.0 are one key to a cache
    raise _Unsure


@functools.lru_cache(maxsize=16384)
def _short_text(value: str) -> str:
    return _text(value)


def _text(value: str | float) -> str:
    """How the emitter writes the scalar, where it fits on its line: as it is where plain and read
    back as a string, else as PyYAML writes it as a mapping's value (the same as a key or an item
    when on one line)."""
    if type(value) is str and reads_as_itself(value):
        return value
    written = pyyaml_lines({"k": value})
    if len(written) != 1 or not written[0].startswith("k: "):
        raise _Unsure  # a block scalar, or text on several lines
    return written[0][3:-1]


def pyyaml_lines(value: Any) -> list[str]:
    """PyYAML's own dump, line by line: the same nodes, made by `_node` (the representer's generic
    dispatch was two thirds of its cost), serialized by the same C emitter."""
    stream = io.StringIO()
    dumper = BlockDumper(stream, default_flow_style=False, sort_keys=True, width=WIDE)
    try:
        dumper.open()
        dumper.serialize(_node(value, dumper))
        dumper.close()
    finally:
        dumper.dispose()
    return git_lines(stream.getvalue(), keepends=True)


def _node(value: Any, dumper: yaml.SafeDumper) -> yaml.Node:
    """The node the safe representer makes of `value` (with `_str` for strings, no aliases, block
    style), for the types parsed YAML holds; any other type is left to the representer. By exact
    type, as the representer dispatches (a bool is no int here)."""
    kind = type(value)
    if kind is str:
        return yaml.ScalarNode(_STR_TAG, value, style="|" if "\n" in value else None)
    if kind is dict:
        items = list(value.items())
        with contextlib.suppress(TypeError):  # keys the representer cannot sort: kept in order
            items = sorted(items)
        pairs = [(_node(k, dumper), _node(v, dumper)) for k, v in items]
        return yaml.MappingNode(_MAP_TAG, pairs, flow_style=False)
    if kind is list:
        return yaml.SequenceNode(_SEQ_TAG, [_node(v, dumper) for v in value], flow_style=False)
    if kind is bool:
        return yaml.ScalarNode(_BOOL_TAG, "true" if value else "false")
    if kind is int:
        return yaml.ScalarNode(_INT_TAG, str(value))
    if value is None:
        return yaml.ScalarNode(_NULL_TAG, "null")
    node: yaml.Node = dumper.represent_data(value)  # floats, timestamps, binary
    return node


_STR_TAG, _MAP_TAG, _SEQ_TAG = (
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
)
_BOOL_TAG, _INT_TAG, _NULL_TAG = (
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:null",
)


class BlockDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The safe dumper, writing multi-line strings as `|` blocks (a script or a config file in a
    ConfigMap then diffs line by line) and never an anchor (which would be noise)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # The emitter asks twice of every scalar whether its text would read back as another
        # type (`"true"`, `"8080"`): the answer depends on the text alone, as no path resolver is
        # registered, and names, images and ports repeat across a diff's objects.
        if kind is yaml.ScalarNode and len(value) <= RESOLVED_MAX_CHARS:
            return resolved(value, implicit)
        return super().resolve(kind, value, implicit)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


BlockDumper.add_representer(str, _str)
