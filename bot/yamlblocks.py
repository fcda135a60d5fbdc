"""Rendered YAML parsed block by block, each distinct block once.

Profiles and sides render mostly the same text: a Deployment differs in `replicas` or one container's
resources, and parsing the whole document again for that costs more than the rest of the review.
So a document's block mapping is cut at its keys (`key:` lines at the mapping's indentation), a key
whose value is a nested block mapping is cut again, and every other block (a leaf) is parsed alone,
once per distinct text, by the same loader. The result is the same mapping the whole document
parses to: a block mapping is exactly the sequence of its entries, and each entry's lines are cut
where the real parser would start the next entry (a line at the mapping's own indentation that
starts with a plain key cannot continue a scalar, a block scalar or a closed flow collection).

Whatever this cannot vouch for falls back to parsing the whole text: a leaf that does not parse
alone (a quote or bracket left open across a cut, an alias to an anchor in another block), merge
keys (`<<`, which look across entries), directives, a document marker that is not a bare `---`,
tabs, and line breaks other than `\\n`. Errors therefore always come from the whole parse, with its
line numbers."""

from __future__ import annotations

import re
from typing import Any

import yaml

from bot.lru import BoundedCache

try:  # libyaml's loader is ~12x faster than the pure-Python one
    LOADER: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    LOADER = yaml.SafeLoader

# A plain key at the start of a line: what Kubernetes manifests and Helm's toYaml write.
_KEY_RE = re.compile(r"( *)([A-Za-z0-9_][A-Za-z0-9_.\-/]*):(?: |$)")
# Text the block parse cannot vouch for: merge keys, tabs, other line breaks, a byte order mark.
_UNSAFE_RE = re.compile("<<|[\t\r\x85\u2028\u2029\ufeff]")
_MARKERS = ("---", "...", "%")
_LEAVES: BoundedCache[str, dict[Any, Any]] = BoundedCache(8192)


class _Unsure(Exception):
    """The block parse cannot vouch for this text; parse it whole."""


def load_mappings(text: str) -> tuple[dict[Any, Any], ...]:
    """The mappings among the documents of `text`, as `yaml.load_all` with the safe loader gives
    them (other documents, such as empty ones, are left out). Raises yaml.YAMLError."""
    try:
        return _blocks(text)
    except _Unsure:
        docs = yaml.load_all(text, Loader=LOADER)  # noqa: S506 - CSafeLoader is safe
        return tuple(doc for doc in docs if isinstance(doc, dict))


def clear_blocks() -> None:
    _LEAVES.clear()


class _Source:
    """A text's lines, with each line's indentation (-1 for a blank or comment line) and whether
    it starts with a plain key, worked out once."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.widths: list[int] = []
        self.keyed: list[bool] = []
        for line in self.lines:
            body = line.lstrip(" ")
            blank = not body or body[0] == "#"
            self.widths.append(-1 if blank else len(line) - len(body))
            self.keyed.append(not blank and _KEY_RE.match(line) is not None)

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
    if _UNSAFE_RE.search(text):
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
                if not src.keyed[first] or src.widths[first] != 0:
                    raise _Unsure  # a top-level list, scalar, flow or indented document
                found.append(_mapping(src, first, i, 0))
            start = i + 1
    return tuple(found)


def _mapping(src: _Source, lo: int, hi: int, indent: int) -> dict[Any, Any]:
    """The block mapping whose keys sit at `indent` in lines lo..hi (line lo is its first key)."""
    starts = []
    for i in range(lo, hi):
        width = src.widths[i]
        if width == indent and src.keyed[i]:
            starts.append(i)
        elif 0 <= width < indent:
            raise _Unsure
    result: dict[Any, Any] = {}
    for start, end in zip(starts, [*starts[1:], hi], strict=True):
        # Assigning in order keeps a repeated key where it first appeared, with its last value:
        # as the loader does.
        for key, value in _entry(src, start, end, indent).items():
            result[key] = value
    return result


def _entry(src: _Source, lo: int, hi: int, indent: int) -> dict[Any, Any]:
    """One entry (or a few, when a line at `indent` starts with something other than a plain key)
    of a block mapping, as the loader parses its text."""
    text = src.text(lo, hi)
    hit = _LEAVES.get(text)
    if hit is None:
        hit = _nested(src, lo, hi, indent)
        if hit is None:
            hit = _parse(text)
        _LEAVES.put(text, hit)
    return hit


def _nested(src: _Source, lo: int, hi: int, indent: int) -> dict[Any, Any] | None:
    """`key:` over a block mapping indented deeper: the key, and that mapping cut in turn."""
    head = src.lines[lo]
    key_only = _KEY_RE.match(head)
    if key_only is None or key_only.end() != len(head):
        return None
    first = src.next_content(lo + 1, hi)
    if first == hi or not src.keyed[first] or src.widths[first] <= indent:
        return None
    key_text = head + "\n"
    parsed_key = _LEAVES.get(key_text)
    if parsed_key is None:
        parsed_key = _parse(key_text)
        _LEAVES.put(key_text, parsed_key)
    key = next(iter(parsed_key))  # `yes:`, `1:`: the loader decides what a key is
    return {key: _mapping(src, first, hi, src.widths[first])}


def _parse(text: str) -> dict[Any, Any]:
    try:
        parsed = yaml.load(text, Loader=LOADER)  # noqa: S506 - CSafeLoader is safe
    except Exception:  # noqa: BLE001 - whatever the loader raises, the whole parse raises it
        raise _Unsure from None
    if not isinstance(parsed, dict):
        raise _Unsure
    return parsed
