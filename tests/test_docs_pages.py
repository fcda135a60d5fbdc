"""docs/: each generated page is what `make docs` makes of its sources now, and says so on its first
line; every relative link of README.md, CONTRIBUTING.md and docs/ reaches a file that exists, and
a `#fragment` into a Markdown file reaches one of its anchors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.cli.docs_pages import COMMAND, NOTE, Page, pages
from checks.headings.slugs import anchors, find_anchor
from tests.support.paths import ROOT

PAGES = pages()
LINKED_DOCS = (ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")))
# An inline link's target: `[text](target)`, up to the first space or closing parenthesis.
LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN_RE = re.compile(r"(`+).+?\1")
FENCE_RE = re.compile(r"^\s*(```|~~~)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.path)
def test_the_committed_page_is_what_its_sources_generate(page: Page) -> None:
    file = ROOT / page.path
    committed = file.read_text() if file.is_file() else None
    assert committed == page.text(), f"{page.path} is stale: run `{COMMAND}`"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.path)
def test_a_generated_page_says_what_generated_it_on_its_first_line(page: Page) -> None:
    first = page.text().split("\n", 1)[0]
    assert first == NOTE.format(source=page.source)
    assert COMMAND in first


def test_every_check_and_every_command_has_its_section() -> None:
    from checks import REGISTRY

    text = {p.path: p.text() for p in PAGES}
    assert [c.name for c in REGISTRY if f"## `{c.name}`: " not in text["docs/checks.md"]] == []
    for command in ("review", "replay", "render", "list-changed", "qos", "versions", "demo"):
        assert f"## `chart-review {command}`" in text["docs/cli.md"]
    assert "| `checks.<check>.enabled` | boolean | `true` |" in text["docs/config.md"]


def links(text: str) -> list[str]:
    """The inline links' targets, outside fenced blocks and code spans (where a link is an
    example, not a link)."""
    found, fenced = [], False
    for line in text.split("\n"):
        if FENCE_RE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            found += LINK_RE.findall(CODE_SPAN_RE.sub("", line))
    return found


def broken_links(doc: Path) -> list[str]:
    broken = []
    for target in links(doc.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # https://, mailto: and the like: not the repository's
        path, _, fragment = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.exists():
            broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
        elif fragment and file.suffix == ".md" and not _has_anchor(file, fragment):
            broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def _has_anchor(file: Path, fragment: str) -> bool:
    return find_anchor(anchors(file.read_text()), fragment) is not None


def test_the_docs_link_checker_reads_links_as_written() -> None:
    text = "See [a](a.md#x) and `[b](b.md)`.\n```\n[c](c.md)\n```\n[d](https://x.io/d)\n"
    assert links(text) == ["a.md#x", "https://x.io/d"]


@pytest.mark.parametrize("doc", LINKED_DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    assert broken_links(doc) == []
