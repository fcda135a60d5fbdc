"""Rendered YAML parsed block by block, each distinct block once.

Profiles and sides render mostly the same text: a Deployment differs in `replicas` or one container's
resources, and parsing the whole document again for that costs more than the rest of the review.
So a document's block mapping is cut at its keys (`key:` lines at the mapping's indentation), and a
key's value is cut again when it is a nested block mapping, or a block sequence of block mappings
(`containers:` over `- name: web` items, at the key's indentation or deeper): that is cut at its
dashes, and each item, read with a space for its dash, is the block mapping it starts (`- name: web`
starts a mapping whose keys sit where `name` does, as `  name: web` would), cut at its keys in turn.
Every other block (a leaf) is parsed alone, once per distinct text, by the same loader, and so is
each distinct item: a container that did not change is not parsed again because its list did.

The result is the same mapping the whole document parses to: a block mapping is exactly the
sequence of its entries, a block sequence of its items, and lines are cut where the real parser
would start the next entry or item (a line at the mapping's own indentation that starts with a plain
key, or at the sequence's that starts with `- ` and a plain key, cannot continue a scalar, a block
scalar or a closed flow collection).

Whatever this cannot vouch for is parsed as one: a sequence with any other item (a scalar, a flow
collection, a nested sequence, a dash alone on its line, a quoted key) is a leaf; and the whole text
is parsed at once for a leaf that does not parse alone (a quote or bracket left open across a cut,
an alias to an anchor in another block), an anchor named twice (which the whole parse refuses,
though each block naming it parses alone), a line indented less than its block, merge keys (`<<`,
which look across entries), directives, a document marker that is not a bare `---`, tabs, and line
breaks other than `\\n`. Errors therefore always come from the whole parse, with its line numbers."""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

from bot.lru import BoundedCache
from bot.model.yaml import bounded
from bot.model.yaml.loader import LOADER
from bot.model.yaml.plain import reads_as_itself
from bot.textsearch import holds_token

__all__ = ["LOADER", "clear_blocks", "load_mappings"]


# A plain key where a line's indentation ends: what Kubernetes manifests and Helm's toYaml write;
# and a sequence item that is a block mapping starting with one (`- name: web`).
_KEY = r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*:(?: |$)"
_KEY_RE = re.compile(_KEY)
_ITEM_RE = re.compile("- " + _KEY)
# Line breaks other than `\n` and a byte order mark: looked for only in text that is not ASCII,
# each by `in` (a CRD's prose quotes with `’`: a character class searched 700 KB in 4 ms, `in` in
# a tenth of a millisecond).
_UNSAFE_CHARACTERS = "\x85\u2028\u2029\ufeff"
_MARKERS = ("---", "...", "%")
# Deeper than this, the cuts (a few Python frames per level) leave the text to libyaml, which
# parses without recursing to 1,000 levels: a crafted document must not reach the recursion limit,
# where its RecursionError would read as invalid YAML. Real manifests nest a dozen or two.
MAX_DEPTH = 64
# A plain key must fit the scanner's look-ahead for `:` (1,024 characters); real ones are short.
_SIMPLE_KEY_CHARS = 128
# Text -> the mapping the loader parses it to: entries, items (dash read as a space) and keys;
# weighed by the text (an entry can be a whole `spec:` or a config file of megabytes). A CRD nests
# its entries a dozen deep, and each level's text is an entry: at 8 MB, a replay's CRDs of 800 KB
# pushed out the leaves the next change asked for (35,000 misses in 40 changes; 14,900 at 24 MB).
LEAF_TEXT_BYTES = 24 * 2**20
# A block parsed by cutting it is remembered only up to this size. Finding a longer one again saves
# only its cuts, about one more pass over its text at C speed (its entries' are looked up in turn),
# while it weighs what thousands of leaves do: a CRD's upper levels, 800 KB each, held a fifth of
# the budget per CRD and pushed out the leaves whose parses are the cost (a replay of
# prometheus-community's last 200 changes parsed in 1.2-1.5 s of CPU, 0.8 s without them). A leaf
# is remembered at any size: its parse is the loader's, over all of it.
CUT_KEPT_CHARS = 64 * 1024
_LEAVES: BoundedCache[str, tuple[dict[Any, Any], int]] = BoundedCache(
    LEAF_TEXT_BYTES, lambda leaf: 64 + leaf[1]
)


def _leaf(text: str) -> dict[Any, Any] | None:
    found = _LEAVES.get(text)
    return found[0] if found is not None else None


def _keep(text: str, parsed: dict[Any, Any], cut: bool = False) -> None:
    """Remember a parse; one made by cutting `text` only when it is short (CUT_KEPT_CHARS)."""
    if not cut or len(text) <= CUT_KEPT_CHARS:
        _LEAVES.put(text, (parsed, len(text)))


class _Unsure(Exception):
    """The block parse cannot vouch for this text; parse it whole."""


def load_mappings(text: str) -> tuple[dict[Any, Any], ...]:
    """The mappings among the documents of `text`, as `yaml.load_all` with the safe loader gives
    them (other documents, such as empty ones, are left out). Raises yaml.YAMLError."""
    if bounded.may_alias(text):  # weighed whole: an alias may name an anchor in another block
        return tuple(doc for doc in bounded.load_all(text) if isinstance(doc, dict))
    try:
        return _blocks(text)
    except _Unsure:
        docs = yaml.load_all(text, Loader=LOADER)  # noqa: S506 - CSafeLoader is safe
        return tuple(doc for doc in docs if isinstance(doc, dict))


def clear_blocks() -> None:
    _LEAVES.clear()


# Where lines start, found by regular expressions at C speed rather than line by line in Python: a
# CRD of 700 KB is 15,000 lines, and reading each line's indentation in Python cost four fifths of
# its parse. Only spaces and `\n` separate here (_unsafe refused the rest). A content line is one
# with something other than spaces and a comment on it; its width is its indentation.
_FIRST_CONTENT = re.compile(r"^( *+)(?=[^ \n#])", re.MULTILINE)  # at or after a line's start
# A plain key (or an item starting with one) at a line's indentation, its line read to its end.
_KEY_AT = re.compile(_KEY.replace("$", "\n|$"))
_ITEM_AT = re.compile("- " + _KEY.replace("$", "\n|$"))
# After a line break: a literal first character lets the search skip ahead at C speed, where `^` in
# multi-line mode is tried at every position (3 ms of a CRD's 12).
_MARKER_LINE = re.compile(r"\n(?:---|\.\.\.|%)")


@functools.lru_cache(maxsize=256)
def _at_most(width: int) -> re.Pattern[str]:
    """The next content line indented `width` or less. Possessive: a deeper line fails at once,
    without giving back its spaces one by one."""
    return re.compile(r"\n( {0," + str(width) + r"}+)(?=[^ \n#])")


def _next_at_most(text: str, pos: int, hi: int, width: int) -> tuple[int, int]:
    """The start and width of the first content line after the line at `pos` indented no deeper
    than `width` (or `hi`, -1): where a mapping's or a sequence's next entry may start. The lines
    between belong to the entry at `pos`; a block a dozen deep is cut without reading its lines at
    every level in Python."""
    found = _at_most(width).search(text, pos, hi)
    return (hi, -1) if found is None else (found.start() + 1, len(found.group(1)))


def _first_content(text: str, pos: int, hi: int) -> tuple[int, int]:
    """The start and width of the first content line at or after the line start `pos` (or hi)."""
    found = _FIRST_CONTENT.search(text, pos, hi)
    return (hi, -1) if found is None else (found.start(), len(found.group(1)))


def _keyed(text: str, at: int) -> bool:
    """Whether the text at `at`, a content line's indentation, starts with a plain key."""
    return _KEY_AT.match(text, at) is not None


def _blocks(text: str) -> tuple[dict[Any, Any], ...]:
    if _unsafe(text):
        raise _Unsure
    found = []
    start = 0
    for at in [*_marker_lines(text), len(text)]:
        first, width = _first_content(text, start, at)
        if first < at:
            if width != 0 or not _keyed(text, first):
                raise _Unsure  # a top-level list, scalar, flow or indented document
            found.append(_mapping(text, first, at, 0, 0))
        start = text.find("\n", at) + 1 or len(text)
    return tuple(found)


def _marker_lines(text: str) -> list[int]:
    """Where the lines that start with a document marker or a directive start; each must be a
    bare `---`."""
    found = [m.start() + 1 for m in _MARKER_LINE.finditer(text)]
    if text.startswith(_MARKERS):
        found.insert(0, 0)
    for at in found:
        end = text.find("\n", at)
        if text[at : len(text) if end < 0 else end].rstrip(" ") != "---":
            raise _Unsure
    return found


def _unsafe(text: str) -> bool:
    """Merge keys, tabs, other line breaks, a byte order mark, an anchor named twice: what the
    cuts cannot vouch for. Character tests and isascii scan at C speed (`<<` by its `<`:
    bot/textsearch.py); one regex alternation over the text costs ~7x as much."""
    return (
        holds_token(text, "<<")
        or "\t" in text
        or "\r" in text
        or (not text.isascii() and any(c in text for c in _UNSAFE_CHARACTERS))
        or ("&" in text and _anchor_twice(text))
    )


def _anchor_twice(text: str) -> bool:
    """The whole parse refuses a document that names an anchor twice; two blocks that each name
    it once parse alone. (Anchors in different documents are fine, but rare: parsed whole too.)"""
    names = list(bounded.anchor_names(text))  # tabs and other breaks were refused before
    return len(set(names)) < len(names)


def _mapping(text: str, lo: int, hi: int, indent: int, depth: int) -> dict[Any, Any]:
    """The block mapping whose keys sit at `indent` in text[lo:hi] (`lo` starts its first key's
    line), `depth` levels below its document."""
    if depth > MAX_DEPTH:
        raise _Unsure
    starts = []
    at, width = lo, indent
    while at < hi:  # content lines no deeper than `indent`: the lines between are entries' own
        if width == indent and _keyed(text, at + indent):
            starts.append(at)
        elif width < indent:
            raise _Unsure
        at, width = _next_at_most(text, at, hi, indent)
    result: dict[Any, Any] = {}
    for start, end in zip(starts, [*starts[1:], hi], strict=True):
        # Assigning in order keeps a repeated key where it first appeared, with its last value:
        # as the loader does.
        for key, value in _entry(text[start:end], indent, depth).items():
            result[key] = value
    return result


def _entry(text: str, indent: int, depth: int) -> dict[Any, Any]:
    """One entry (or a few, when a line at `indent` starts with something other than a plain key)
    of a block mapping, as the loader parses its text (its lines exactly as written, with the line
    break that ends them: a block scalar's last line break depends on it)."""
    if len(text) > CUT_KEPT_CHARS:
        # Never kept once cut, so cut it first: looking it up hashes all of it, at every level of
        # a CRD (a quarter of re-parsing one that changed a line). A long leaf is looked up after.
        hit = _nested(text, indent, depth)
        if hit is not None:
            return hit
    hit = _leaf(text)
    if hit is None:
        hit = _nested(text, indent, depth)
        if hit is not None:
            _keep(text, hit, cut=True)
        else:
            hit = _parse(text)
            _keep(text, hit)
    return hit


def _nested(text: str, indent: int, depth: int) -> dict[Any, Any] | None:
    """`key:` over a block mapping indented deeper, or over a block sequence of block mappings:
    the key, and its value cut in turn."""
    eol = text.find("\n")
    if eol < 0:
        return None
    key_only = _KEY_RE.match(text, indent, eol)
    if key_only is None or key_only.end() != eol:
        return None
    first, width = _first_content(text, eol + 1, len(text))
    if first == len(text):
        return None
    value: dict[Any, Any] | list[dict[Any, Any]] | None
    if width > indent and _keyed(text, first + width):
        value = _mapping(text, first, len(text), width, depth + 1)
    else:  # at `indent` or deeper: _mapping let no shallower line in
        value = _sequence(text, first, width, depth + 1)
    if value is None:
        return None
    return {_key(text[: eol + 1]): value}


def _key(head: str) -> Any:
    """The key of a `key:` line: `yes:`, `1:`, the loader decides what a key is."""
    parsed = _leaf(head)
    if parsed is None:
        parsed = _parse(head)
        _keep(head, parsed)
    return next(iter(parsed))


def _sequence(text: str, lo: int, dash: int, depth: int) -> list[dict[Any, Any]] | None:
    """The block sequence whose dashes sit at `dash` in text[lo:] (`lo` starts its first item's
    line), when each item is a block mapping whose first key follows the dash on its line; else
    None, before anything is parsed, so that the caller parses the text as one leaf."""
    hi = len(text)
    starts = []
    at, width = lo, dash
    while at < hi:
        if width == dash:
            if _ITEM_AT.match(text, at + dash) is None:
                return None  # a scalar, flow or nested item, a dash alone, a quoted key, ...
            starts.append(at)
        elif width < dash:
            return None  # under the sequence's own indentation: not this sequence
        at, width = _next_at_most(text, at, hi, dash)
    ends = [*starts[1:], hi]
    return [_item(text, start, end, dash, depth) for start, end in zip(starts, ends, strict=True)]


def _item(text: str, lo: int, hi: int, dash: int, depth: int) -> dict[Any, Any]:
    """One item of a block sequence, read with a space for its dash: the block mapping it starts,
    its keys where the first one sits (`- name: web` reads as `  name: web`), parsed once per
    distinct text (an unchanged container in a list that changed)."""
    item = f"{text[lo : lo + dash]} {text[lo + dash + 1 : hi]}"
    hit = _leaf(item) if len(item) <= CUT_KEPT_CHARS else None  # a long one is never kept
    if hit is None:
        hit = _mapping(item, 0, len(item), dash + 2, depth + 1)
        _keep(item, hit, cut=True)
    return hit


def _parse(text: str) -> dict[Any, Any]:
    simple = _simple_entry(text)
    if simple is not None:
        return simple
    try:
        parsed = yaml.load(text, Loader=LOADER)  # noqa: S506 - CSafeLoader is safe
    except Exception:  # noqa: BLE001 - whatever the loader raises, the whole parse raises it
        raise _Unsure from None
    if not isinstance(parsed, dict):
        raise _Unsure
    return parsed


def _simple_entry(text: str) -> dict[str, Any] | None:
    """`key: value` or `key:` alone on its line, each a plain string that reads as itself: what
    most of a manifest's leaves are (labels, names, images, a CRD's one-line descriptions), read
    without the loader. None for anything else."""
    line = text[:-1] if text.endswith("\n") else text
    if "\n" in line:
        return None
    body = line.lstrip(" ")
    key, colon, value = body.partition(": ")
    if not colon:
        if not body.endswith(":"):
            return None
        key = body[:-1]
    elif not reads_as_itself(value):
        return None
    if len(key) >= _SIMPLE_KEY_CHARS or not reads_as_itself(key):
        return None
    return {key: value if colon else None}
