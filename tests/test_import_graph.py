"""The import graph as grimp (import-linter's) reads it, `TYPE_CHECKING` and function-local
imports counted: no module of bot/, checks/ or webhooks/ imports, directly or through others, a
module that imports it back; the engine and the chart pipeline reach git only through the ports of
bot/git/objects.py; and the review core and git's modules stay small. The layers' contracts are
.importlinter's, run by `make lint`."""

from __future__ import annotations

from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
ENGINE_MAX_LINES = 1500  # the review core (bot/engine/): what a newcomer reads first
MODULE_MAX_LINES = 450  # a module a reader holds in mind at once
# What runs git, which the engine and the chart pipeline are handed as a `GitReader` instead.
GIT_ADAPTERS = (
    "bot.git.repo",
    "bot.git.process",
    "bot.git.listings",
    "bot.git.revisions",
    "bot.git.patched",
)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycles_finds_a_circle_and_only_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(edges) == [["a", "b", "c"]]


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = grimp.build_graph("bot", "checks", "webhooks")
    modules = set(graph.modules)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & modules for m in modules}
    assert cycles(edges) == []


def test_the_review_core_stays_small() -> None:
    lines = sum(len(p.read_text().splitlines()) for p in (ROOT / "bot/engine").rglob("*.py"))
    assert lines < ENGINE_MAX_LINES, f"bot/engine/ is {lines} lines"


def test_the_engine_and_the_charts_reach_no_git_adapter() -> None:
    graph = grimp.build_graph("bot", cache_dir=None)
    for importer in ("bot.engine", "bot.charts"):
        for adapter in GIT_ADAPTERS:
            chain = graph.find_shortest_chains(importer=importer, imported=adapter)
            assert chain == set(), f"{importer} imports {adapter}: {sorted(chain)}"


def test_no_module_is_over_the_size_a_reader_holds_in_mind() -> None:
    sizes = {
        p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines())
        for top in ("bot", "checks", "webhooks")
        for p in (ROOT / top).rglob("*.py")
    }
    over = {path: n for path, n in sorted(sizes.items()) if n > MODULE_MAX_LINES}
    assert over == {}, f"over {MODULE_MAX_LINES} lines: {over}"
