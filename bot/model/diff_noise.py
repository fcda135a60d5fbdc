"""What the rendered diff leaves out of an object: the labels and annotations every release
changes, the values of `ignore_fields`, a Secret's values. `comparable` gives the object as the
diff shows it; `alike` tells whether two objects would show the same without making either, which
is what most objects of a version bump are (only `helm.sh/chart` differs).

Objects parsed block by block share every block whose text did not change (bot/model/yaml/
blocks.py): `alike` skips a shared subtree at once, and `comparable` copies only the mappings that
hold noise, so a CRD of 13,000 lines whose metadata changed is not copied whole."""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.model.config import DiffConfig
from bot.model.manifests import Document

# Secret values are never printed, even from CI values, nor compared: a `randAlphaNum` password or
# a `genCA` key is new at every render. Which keys a Secret has still shows.
SECRET_KINDS = frozenset({"Secret"})
SECRET_FIELDS = ("data", "stringData")
REDACTED = "<redacted>"
NOT_COMPARED_VALUE = "<not compared>"  # an `ignore_fields` field's value


def comparable(doc: Document | None, noise: DiffConfig) -> dict[str, Any] | None:
    """The object as the diff shows it: its noise left out, a Secret's values redacted."""
    if doc is None:
        return None
    body = _quiet(doc.body, fields_pattern(tuple(noise.ignore_fields)), noise)
    return redacted(body) if doc.kind in SECRET_KINDS else body


def alike(base: Document, head: Document, noise: DiffConfig) -> bool:
    """Whether both objects show the same in the diff: True only where their comparable forms
    dump alike; False where they differ or this cannot tell (then they are compared in full)."""
    if base.kind != head.kind:
        return False
    a, b = base.body, head.body
    if base.kind in SECRET_KINDS:
        a, b = redacted(a), redacted(b)
    try:
        return _alike(a, b, fields_pattern(tuple(noise.ignore_fields)), noise)
    except RecursionError:
        return False


def _alike(a: Any, b: Any, ignored: re.Pattern[str] | None, noise: DiffConfig) -> bool:
    if a is b:
        return True  # a block both renders share
    kind = type(a)
    if kind is dict:
        if type(b) is not dict or a.keys() != b.keys():
            return False
        for k, va in a.items():
            vb = b[k]
            if type(k) is not str:
                return False  # _quiet writes it as text, where it may meet another key
            metadata = k == "metadata" and isinstance(va, Mapping)
            if metadata != (k == "metadata" and isinstance(vb, Mapping)):
                return False
            if metadata:
                va, vb = _quiet_metadata(va, noise), _quiet_metadata(vb, noise)
            elif ignored is not None and ignored.match(k):
                continue  # both shown as NOT_COMPARED_VALUE
            if not _alike(va, vb, ignored, noise):
                return False
        return True
    if kind is list:
        return (
            type(b) is list
            and len(a) == len(b)
            and all(_alike(x, y, ignored, noise) for x, y in zip(a, b, strict=True))
        )
    # Scalars: `1 == 1.0 == True`, `0.0 == -0.0`, one moment in two time zones: the dump writes
    # them apart.
    return kind is type(b) and a == b and (kind in _EXACT or repr(a) == repr(b))


_EXACT = frozenset({str, int, bool, type(None)})  # where equal values dump alike


def _quiet(value: Any, ignored: re.Pattern[str] | None, noise: DiffConfig) -> Any:
    """`value` without the noisy labels and annotations of each `metadata` in it (the object's, a
    pod template's, a volume claim template's), nor the values of ignored fields; keys as text.
    Selectors keep their labels: a changed selector is no noise. What holds none of it is
    returned as it is, not copied."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        out = {}
        same = kind is dict
        for k, v in value.items():
            shown = v
            if k == "metadata" and isinstance(v, Mapping):
                shown = _quiet_metadata(v, noise)
            elif ignored is not None and ignored.match(str(k)):
                shown = NOT_COMPARED_VALUE
            if type(shown) not in _SCALARS:  # a CRD's walk is mostly its scalars: no call for them
                shown = _quiet(shown, ignored, noise)
            # Keys as text: YAML keys may mix numbers and strings (a tcp-services ConfigMap's
            # `8080:`), which sorting cannot compare.
            key = k if type(k) is str else str(k)
            same = same and shown is v and key is k
            out[key] = shown
        return value if same else out
    if kind is list or kind is tuple:
        items = [_quiet(v, ignored, noise) for v in value]
        same = kind is list and all(x is y for x, y in zip(items, value, strict=True))
        return value if same else items
    return value


# What `_quiet` returns as it is, told by exact type (an isinstance of the Mapping ABC costs more).
_SCALARS = frozenset({str, int, float, bool, type(None)})


@functools.lru_cache(maxsize=64)
def fields_pattern(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """`ignore_fields` as one expression: the same matches as fnmatchcase against each pattern,
    for a walk that asks it of every key of every object."""
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(p) for p in patterns))


def _quiet_metadata(metadata: Mapping[str, Any], noise: DiffConfig) -> Mapping[str, Any]:
    """The metadata without its noisy labels and annotations; itself where it holds none (a CRD's
    schemas name `metadata` in many places), so that what holds it is not copied for nothing."""
    out = dict(metadata)
    changed = type(metadata) is not dict
    for field, patterns in (
        ("labels", noise.ignore_labels),
        ("annotations", noise.ignore_annotations),
    ):
        entries = out.get(field)
        if not isinstance(entries, Mapping):
            continue
        kept = {k: v for k, v in entries.items() if not _matches(str(k), tuple(patterns))}
        if kept and len(kept) == len(entries) and type(entries) is dict:
            continue  # nothing left out: kept as it is
        changed = True
        if kept:
            out[field] = kept
        else:
            del out[field]  # `labels: {}` on one side only would be a diff of nothing
    return out if changed else metadata


def _matches(name: str, patterns: Sequence[str]) -> bool:
    pattern = fields_pattern(tuple(patterns))
    return pattern is not None and pattern.match(name) is not None


def redacted(body: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    for field in SECRET_FIELDS:
        entries = out.get(field)
        if isinstance(entries, Mapping):
            out[field] = dict.fromkeys(entries, REDACTED)
    return out
