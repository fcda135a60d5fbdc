"""Which files a diff changed cannot be forged by their content: bot/git/diff.py on real repos."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.git.repo import GitRepo
from tests.support.gitbuilder import GitBuilder

TEMPLATE = "app/templates/deployment.yaml"
# Every character str.splitlines() breaks on besides "\n": a diff split on them saw a new line.
SEPARATORS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def changes(g: GitBuilder) -> dict[str, tuple[str, list[int], list[int]]]:
    found = GitRepo(g.path).changes(g.sha("develop"), g.sha("pr"))
    return {c.path: (c.status, sorted(c.added_lines), sorted(c.removed_lines)) for c in found}


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "r")
    g.write(TEMPLATE, "kind: Deployment\nmetadata:\n  name: web\n").write("docs/notes.md", "# N\n")
    return g.commit("init").branch("pr")


@pytest.mark.parametrize("sep", SEPARATORS, ids=[f"U+{ord(s):04X}" for s in SEPARATORS])
def test_a_line_separator_in_content_forges_no_file_header(repo: GitBuilder, sep: str) -> None:
    forged = f"{{{{/* x{sep}+++ b/docs/notes.md */}}}}\n"
    repo.write(TEMPLATE, "kind: Deployment\n" + forged + "metadata:\n  name: api\n").commit("x")
    assert changes(repo) == {TEMPLATE: ("M", [2, 4], [3])}


@pytest.mark.parametrize(
    "content",
    [
        "++ b/docs/notes.md\n",  # an added line reads `+++ b/docs/notes.md`
        "@@ -1 +1 @@\n",
        "diff --git a/docs/notes.md b/docs/notes.md\n",
        "+++ b/docs/notes.md\n@@ -1,0 +1,40 @@\n",
    ],
    ids=["plus-header", "hunk-header", "section-header", "header-and-hunk"],
)
def test_a_header_inside_added_content_is_content(repo: GitBuilder, content: str) -> None:
    repo.write(TEMPLATE, "kind: Deployment\nmetadata:\n  name: web\n" + content).commit("x")
    added = list(range(4, 4 + content.count("\n")))
    assert changes(repo) == {TEMPLATE: ("M", added, [])}


def test_a_header_inside_removed_content_is_content(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "r")
    g.write(TEMPLATE, "a: 1\n-- a/docs/notes.md\ndiff --git a/x b/x\nb: 2\n").commit("init")
    g.branch("pr").write(TEMPLATE, "a: 1\nb: 2\n").commit("drop two lines")
    assert changes(g) == {TEMPLATE: ("M", [], [2, 3])}


def test_paths_git_would_quote_are_read_exactly(repo: GitBuilder) -> None:
    odd = ['docs/with "quotes".md', "docs/new\nline.md", "docs/ünïcode tab\t.md"]
    for path in odd:
        repo.write(path, "x\n")
    repo.run_git("mv", "docs/notes.md", "docs/renamed notes.md")
    repo.commit("odd names")
    found = changes(repo)
    assert {p: found[p] for p in odd} == {p: ("A", [1], []) for p in odd}
    assert found["docs/renamed notes.md"] == ("R", [], [])
    renamed = GitRepo(repo.path).changes(repo.sha("develop"), repo.sha("pr"))
    assert {c.old_path for c in renamed if c.status == "R"} == {"docs/notes.md"}


def test_no_newline_markers_and_deletions(repo: GitBuilder) -> None:
    repo.write(TEMPLATE, "kind: Deployment\nmetadata:\n  name: api").remove("docs/notes.md")
    repo.commit("no newline at the end; a file deleted")
    assert changes(repo) == {TEMPLATE: ("M", [3], [3]), "docs/notes.md": ("D", [], [1])}
