"""Which strings YAML writes and reads as they are: a plain scalar in block context that the safe
resolver reads back as a string. One place for the fact, for the dump (dump.py), which writes such
a string bare, and the block parser (blocks.py), which reads a `key: value` line of two of them
without the loader (whose call costs ~25 us, and a manifest's leaves are mostly such lines)."""

from __future__ import annotations

import functools
import re

import yaml

# By libyaml's rules for a plain scalar in block context: no indicator first, no `: ` or ` #`, no
# space at either end, printable ASCII. A subset: names, labels, images, paths, quantities.
# (`...` first would read as a document's end.)
_PLAIN = re.compile(
    r"(?!\.\.\.)[A-Za-z0-9_./(][A-Za-z0-9_./()=+@%,~-]*(?:[: ][A-Za-z0-9_./()=+@%,~-]+)*"
)
STR_TAG = "tag:yaml.org,2002:str"
# Resolutions remembered up to this length: names, images and ports repeat across objects.
RESOLVED_MAX_CHARS = 128
_RESOLVER = yaml.resolver.Resolver()  # the implicit resolvers of the safe loader and dumper


def reads_as_itself(text: str) -> bool:
    """Whether `text`, written plain, reads back as this very string."""
    return _PLAIN.fullmatch(text) is not None and _resolves_to_str(text)


def _resolves_to_str(value: str) -> bool:
    if len(value) > RESOLVED_MAX_CHARS:
        found: str = _RESOLVER.resolve(yaml.ScalarNode, value, (True, False))
        return found == STR_TAG
    return resolved(value, (True, False)) == STR_TAG


@functools.lru_cache(maxsize=4096)
def resolved(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag the safe resolver gives a scalar of this text."""
    tag: str = yaml.resolver.Resolver.resolve(_RESOLVER, yaml.ScalarNode, value, implicit)
    return tag
