"""Objects a chart names anew at each render: the same object, not a rename.

jenkinsci's chart names its test pod `{{ .Release.Name }}-ui-test-{{ randAlphaNum 5 | lower }}`, so
base and head (and two renders of one commit) differ in that suffix alone. A review that paired
objects by name alone saw one removed and one added on every PR: the QoS check said "renamed", the
duplicates check "the same change" in every pair of PRs. Pairs are made only where unambiguous."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.model.manifests import Document

# A name's last dash-separated part, when it could be a random suffix (`-4fwxs`, `-h8ed3`).
_SUFFIX_RE = re.compile(r"(.+-)([a-z0-9]{4,16})")


def named_at_random(old: Document, new: Document) -> bool:
    """Whether `old` and `new` could be one object of one template named at random: the same kind,
    namespace and template, names equal but for a last part of the same length."""
    slot = _slot(old)
    return slot is not None and slot == _slot(new)


def random_pairs(removed: Mapping[str, Document], added: Mapping[str, Document]) -> dict[str, str]:
    """Removed key -> added key, where each is the only one of its side that could be the other
    (grouped by what must match, so a render of thousands of objects costs a pass, not a square)."""
    olds, news = _by_slot(removed), _by_slot(added)
    return {
        keys[0]: news[slot][0]
        for slot, keys in olds.items()
        if len(keys) == 1 and len(news.get(slot, ())) == 1
    }


def _slot(doc: Document) -> tuple[str, str, str, str, int] | None:
    match = _SUFFIX_RE.fullmatch(doc.name)
    if match is None:
        return None
    return doc.kind, doc.namespace, doc.template, match[1], len(match[2])


def _by_slot(docs: Mapping[str, Document]) -> dict[tuple[str, str, str, str, int], list[str]]:
    out: dict[tuple[str, str, str, str, int], list[str]] = {}
    for key, doc in docs.items():
        slot = _slot(doc)
        if slot is not None:
            out.setdefault(slot, []).append(key)
    return out
