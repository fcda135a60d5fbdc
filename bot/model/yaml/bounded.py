"""YAML from a PR, parsed with a budget for what its aliases expand to.

A loader shares the object an alias names, so a few hundred bytes of nested aliases (a "billion
laughs") parse at once into a small graph, and then cost gigabytes and minutes to whatever walks
or serialises it: 386 bytes of values took 1.4 GB in `json.dumps`, a 622-byte ResourceQuota past
3 GB in the checks, all of it holding the GIL the webhook receiver needs. So before constructing a
document that has anchors, its composed node graph is weighed as if every alias were expanded
(each node once, by memo, so weighing is linear in the text) and refused past EXPANSION_LIMIT.
A document that contains itself through an alias is refused too: nothing downstream could walk it.
Text without an anchor cannot alias and is left to the fast paths untouched.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from bot.model.yaml.loader import LOADER
from bot.textsearch import FALSE_HITS

# Nodes plus scalar characters, every alias expanded: some hundred times a large real manifest or
# values file (a 4,000-line values.yaml weighs ~150,000), and a few megabytes of JSON at worst.
EXPANSION_LIMIT = 2_000_000


class AliasBudgetError(yaml.YAMLError):
    """Shaped like PyYAML's errors (`problem`, `problem_mark`), so every caller that reports a YAML
    error with its line reports this one too."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


# An anchor's name as the scanner reads it, and what may stand before one on its line: nothing (the
# indentation), an indicator (`- `, `? `, `: `, a flow bracket or comma) or a tag (`!!map &a`).
_ANCHOR_RE = re.compile(r"&([0-9A-Za-z_-]+)")
_BEFORE_ANCHOR = "-?:,[{"
# Separation and line breaks other than ` ` and `\n`, where a line's start and an anchor's place
# are not what anchor_names reads them as: each looked for by `in`, at C speed (a character class
# reads a CRD of 700 KB a character at a time).
_ODD_SPACING = "\t\r\x85\u2028\u2029\ufeff"


def may_alias(text: str) -> bool:
    """Whether `text` can hold an alias at all: one needs an anchor and a reference (`*`). A CRD's
    prose (`at both the pod & container level`, `*Warning*`) has both characters but no anchor,
    and a manifest of 800 KB parsed whole costs ~100x its blocks."""
    if "&" not in text or "*" not in text:
        return False
    if any(c in text for c in _ODD_SPACING):
        return True
    return next(anchor_names(text), None) is not None


def anchor_names(text: str) -> Iterator[str]:
    """The names of the anchors `text` may define, loosely (in a quoted or block scalar too, and
    where the line holds a tag anywhere before): each `&name` where a node may start. Sound for text
    whose only separation is the space and whose only line break is the line feed."""
    for match in _anchor_matches(text):
        at = match.start()
        before = text[text.rfind("\n", 0, at) + 1 : at].rstrip(" ")
        if not before or before[-1] in _BEFORE_ANCHOR or "!" in before.rsplit(" ", 1)[-1]:
            yield match.group(1)


def _anchor_matches(text: str) -> Iterator[re.Match[str]]:
    """_ANCHOR_RE's matches in `text`, in order: each `&` found by a character search (the
    pattern's own search walks a CRD's 800 KB a character at a time, ~0.5 ms), until FALSE_HITS of
    them were no anchor's (a crafted text of `&`s); the rest by the pattern, at C speed."""
    at, misses = text.find("&"), 0
    while at >= 0:
        match = _ANCHOR_RE.match(text, at)
        if match is None:
            misses += 1
            if misses > FALSE_HITS:
                yield from _ANCHOR_RE.finditer(text, at)
                return
            at = text.find("&", at + 1)
            continue
        yield match
        at = text.find("&", match.end())


def load_all(text: str, loader: type = LOADER) -> list[Any]:
    """`yaml.load_all`, refusing a document whose aliases expand past the budget."""
    if not may_alias(text):
        return list(yaml.load_all(text, Loader=loader))  # noqa: S506 - a safe or base loader
    parser = loader(text)
    try:
        docs = []
        while parser.check_node():
            node = parser.get_node()
            check_expansion(node)
            docs.append(parser.construct_document(node))
        return docs
    finally:
        parser.dispose()


def load(text: str, loader: type = LOADER) -> Any:
    """`yaml.load` (the first document, or None), with the same budget."""
    docs = load_all(text, loader)
    return docs[0] if docs else None


def check_expansion(root: yaml.Node) -> None:
    """Raise AliasBudgetError when `root` expanded would weigh more than EXPANSION_LIMIT, or
    contains itself. Iterative: a document may nest a thousand levels."""
    weight: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            total = 1 + sum(weight[id(child)] for child in _children(node))
            if total > EXPANSION_LIMIT:
                raise AliasBudgetError(
                    f"its aliases expand to more than {EXPANSION_LIMIT:,} nodes and characters "
                    "(an alias bomb); refused before it is read",
                    node.start_mark,
                )
            weight[key] = total
            open_nodes.discard(key)
        elif key in open_nodes:
            raise AliasBudgetError("an alias makes the document contain itself", node.start_mark)
        elif key not in weight:
            if isinstance(node, yaml.ScalarNode):
                weight[key] = 1 + len(node.value)
                continue
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in weight)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []
