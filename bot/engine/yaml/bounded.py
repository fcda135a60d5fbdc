"""YAML from a PR, parsed with a budget for what its aliases expand to.

A loader shares the object an alias names, so a few hundred bytes of nested aliases (a "billion
laughs") parse at once into a small graph, and then cost gigabytes and minutes to whatever walks
or serialises it: 386 bytes of values took 1.4 GB in `json.dumps`, a 622-byte ResourceQuota past
3 GB in the checks, all of it holding the GIL the webhook receiver needs. So before constructing a
document that has anchors, its composed node graph is weighed as if every alias were expanded
(each node once, by memo, so weighing is linear in the text) and refused past EXPANSION_LIMIT.
A document that contains itself through an alias is refused too: nothing downstream could walk it.
Text without both `&` and `*` cannot alias and is left to the fast paths untouched.
"""

from __future__ import annotations

from typing import Any

import yaml

from bot.engine.yaml.loader import LOADER

# Nodes plus scalar characters, every alias expanded: some hundred times a large real manifest or
# values file (a 4,000-line values.yaml weighs ~150,000), and a few megabytes of JSON at worst.
EXPANSION_LIMIT = 2_000_000


class AliasBudgetError(yaml.YAMLError):
    """Shaped like PyYAML's errors (`problem`, `problem_mark`), so every caller that reports a YAML
    error with its line reports this one too."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(problem)
        self.problem, self.problem_mark = problem, mark


def may_alias(text: str) -> bool:
    """Whether `text` can hold an alias at all: one needs an anchor (`&`) and a reference (`*`)."""
    return "&" in text and "*" in text


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
