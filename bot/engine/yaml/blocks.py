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

import re
from typing import Any

import yaml

from bot.engine.yaml import bounded
from bot.engine.yaml.loader import LOADER
from bot.engine.yaml.plain import reads_as_itself
from bot.lru import BoundedCache

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
_LEAVES: BoundedCache[str, tuple[dict[Any, Any], int]] = BoundedCache(
    LEAF_TEXT_BYTES, lambda leaf: 64 + leaf[1]
)


def _leaf(text: str) -> dict[Any, Any] | None:
    found = _LEAVES.get(text)
    return found[0] if found is not None else None


def _keep(text: str, parsed: dict[Any, Any]) -> None:
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


class _Source:
    """A text's lines, with each line's indentation (-1 for a blank or comment line) worked out
    once. Whether a line starts with a plain key is worked out when asked, only of lines at the
    indentation of a mapping being cut: most lines never are, and matching each cost ~12% of
    the parse."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.widths: list[int] = []
        for line in self.lines:
            body = line.lstrip(" ")
            self.widths.append(len(line) - len(body) if body and body[0] != "#" else -1)
        self._next: list[int] | None = None

    def next_at_most(self, i: int) -> int:
        """The first content line after content line i indented no deeper than it (or the end):
        where a mapping's or a sequence's next entry may start. The lines between belong to line
        i's entry; a block a dozen deep is then cut without reading its lines at every level."""
        if self._next is None:
            self._next = self._shallower()
        return self._next[i]

    def _shallower(self) -> list[int]:
        found = [len(self.lines)] * len(self.lines)
        open_lines: list[int] = []  # content lines not yet followed by one as shallow
        for i, width in enumerate(self.widths):
            if width < 0:
                continue
            while open_lines and self.widths[open_lines[-1]] >= width:
                found[open_lines.pop()] = i
            open_lines.append(i)
        return found

    def keyed(self, i: int) -> bool:
        """Whether content line i starts with a plain key."""
        return _KEY_RE.match(self.lines[i], self.widths[i]) is not None

    def undash(self, i: int) -> None:
        """Read line i, a sequence item `- key: ...`, as the block mapping it starts: the same
        line with a space for the dash, indented to the key (where the mapping's keys sit)."""
        line, width = self.lines[i], self.widths[i]
        self.lines[i] = f"{line[:width]} {line[width + 1 :]}"
        self.widths[i] = width + 2
        if self._next is not None:  # now deeper: its next line as shallow may come sooner
            j = i + 1
            while j < len(self.lines) and not 0 <= self.widths[j] <= width + 2:
                j = self._next[j] if self.widths[j] >= 0 else j + 1
            self._next[i] = j

    def text(self, lo: int, hi: int) -> str:
        """Lines lo..hi exactly as written, with the line break that ends them (a block scalar's
        last line break depends on it)."""
        return "\n".join(self.lines[lo:hi]) + ("\n" if hi < len(self.lines) else "")

    def next_content(self, lo: int, hi: int) -> int:
        for i in range(lo, hi):
            if self.widths[i] >= 0:
                return i
        return hi


def _blocks(text: str) -> tuple[dict[Any, Any], ...]:
    if _unsafe(text):
        raise _Unsure
    src = _Source(text)
    found = []
    start = 0
    for i, line in enumerate([*src.lines, "---"]):
        if line.startswith(_MARKERS):
            if line.rstrip(" ") != "---":
                raise _Unsure
            first = src.next_content(start, i)
            if first < i:
                if src.widths[first] != 0 or not src.keyed(first):
                    raise _Unsure  # a top-level list, scalar, flow or indented document
                found.append(_mapping(src, first, i, 0, 0))
            start = i + 1
    return tuple(found)


def _unsafe(text: str) -> bool:
    """Merge keys, tabs, other line breaks, a byte order mark, an anchor named twice: what the
    cuts cannot vouch for. Substring tests and isascii scan at C speed; one regex alternation
    over the text costs ~7x as much."""
    return (
        "<<" in text
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


def _mapping(src: _Source, lo: int, hi: int, indent: int, depth: int) -> dict[Any, Any]:
    """The block mapping whose keys sit at `indent` in lines lo..hi (line lo is its first key),
    `depth` levels below its document."""
    if depth > MAX_DEPTH:
        raise _Unsure
    starts = []
    i = lo
    while i < hi:  # content lines no deeper than `indent`: the lines between are entries' own
        width = src.widths[i]
        if width == indent and src.keyed(i):
            starts.append(i)
        elif width < indent:
            raise _Unsure
        i = src.next_at_most(i)
    result: dict[Any, Any] = {}
    for start, end in zip(starts, [*starts[1:], hi], strict=True):
        # Assigning in order keeps a repeated key where it first appeared, with its last value:
        # as the loader does.
        for key, value in _entry(src, start, end, indent, depth).items():
            result[key] = value
    return result


def _entry(src: _Source, lo: int, hi: int, indent: int, depth: int) -> dict[Any, Any]:
    """One entry (or a few, when a line at `indent` starts with something other than a plain key)
    of a block mapping, as the loader parses its text."""
    text = src.text(lo, hi)
    hit = _leaf(text)
    if hit is None:
        hit = _nested(src, lo, hi, indent, depth)
        if hit is None:
            hit = _parse(text)
        _keep(text, hit)
    return hit


def _nested(src: _Source, lo: int, hi: int, indent: int, depth: int) -> dict[Any, Any] | None:
    """`key:` over a block mapping indented deeper, or over a block sequence of block mappings:
    the key, and its value cut in turn."""
    head = src.lines[lo]
    key_only = _KEY_RE.match(head, indent)
    if key_only is None or key_only.end() != len(head):
        return None
    first = src.next_content(lo + 1, hi)
    if first == hi:
        return None
    width = src.widths[first]
    value: dict[Any, Any] | list[dict[Any, Any]] | None
    if width > indent and src.keyed(first):
        value = _mapping(src, first, hi, width, depth + 1)
    else:  # at `indent` or deeper: _mapping let no shallower line in
        value = _sequence(src, first, hi, width, depth + 1)
    if value is None:
        return None
    return {_key(head): value}


def _key(head: str) -> Any:
    """The key of a `key:` line: `yes:`, `1:`, the loader decides what a key is."""
    text = head + "\n"
    parsed = _leaf(text)
    if parsed is None:
        parsed = _parse(text)
        _keep(text, parsed)
    return next(iter(parsed))


def _sequence(src: _Source, lo: int, hi: int, dash: int, depth: int) -> list[dict[Any, Any]] | None:
    """The block sequence whose dashes sit at `dash` in lines lo..hi (line lo is its first item),
    when each item is a block mapping whose first key follows the dash on its line; else None,
    before anything is parsed or changed, so that the caller parses the lines as one leaf."""
    starts = []
    i = lo
    while i < hi:
        width = src.widths[i]
        if width == dash:
            if _ITEM_RE.match(src.lines[i], dash) is None:
                return None  # a scalar, flow or nested item, a dash alone, a quoted key, ...
            starts.append(i)
        elif width < dash:
            return None  # under the sequence's own indentation: not this sequence
        i = src.next_at_most(i)
    for i in starts:
        src.undash(i)
    ends = [*starts[1:], hi]
    return [
        _item(src, start, end, dash + 2, depth) for start, end in zip(starts, ends, strict=True)
    ]


def _item(src: _Source, lo: int, hi: int, indent: int, depth: int) -> dict[Any, Any]:
    """One item of a block sequence, its dash read as a space: the block mapping whose keys sit at
    `indent`, parsed once per distinct text (an unchanged container in a list that changed)."""
    text = src.text(lo, hi)
    hit = _leaf(text)
    if hit is None:
        hit = _mapping(src, lo, hi, indent, depth + 1)
        _keep(text, hit)
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
