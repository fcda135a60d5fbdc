"""`--link OWNER/NAME=PATH[@REF]`: bot/cli/links.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.links import NOT_LINKED, local_resolver, parse_link
from bot.errors import UsageError
from bot.model.context import OpenPR
from tests.support.gitbuilder import GitBuilder


@pytest.mark.parametrize(
    ("arg", "parsed"),
    [
        ("acme/backend=../backend", ("acme/backend", "../backend", None)),
        ("acme/backend=/src/backend@main", ("acme/backend", "/src/backend", "main")),
        ("acme/back.end=/src/x@feature/rollback", ("acme/back.end", "/src/x", "feature/rollback")),
    ],
)
def test_parse_link(arg: str, parsed: tuple[str, str, str | None]) -> None:
    assert parse_link(arg) == parsed


@pytest.mark.parametrize(
    ("arg", "error"),
    [
        ("backend=/src", "expected a repository OWNER/NAME before '='"),
        ("acme/backend", "expected a repository OWNER/NAME before '='"),
        ("acme/backend=", "no local path after '='"),
        ("acme/backend=/src@", "'' is not a git ref"),
        ("acme/backend=/src@a..b", "'a..b' is not a git ref"),
    ],
)
def test_parse_link_errors_are_one_line(arg: str, error: str) -> None:
    with pytest.raises(UsageError, match=error) as raised:
        parse_link(arg)
    assert "\n" not in str(raised.value)


def test_local_resolver_reads_develop_and_open_pull_refs(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "b").write("a.txt", "1").commit("init")
    g.branch("merged").write("a.txt", "2").commit("merged").pull_ref(3, "merged")
    g.checkout("develop").merge("merged")
    g.branch("open").write("b.txt", "3").commit("open").pull_ref(4, "open").checkout("develop")
    resolve = local_resolver({"acme/b": (str(g.path), None)})
    linked = resolve("acme/b")
    assert linked.develop == g.sha("develop")
    assert linked.open_prs == (OpenPR(number=4, head=g.sha("open")),)
    assert linked.git is not None and linked.git.tree(linked.develop).read("a.txt") == b"2"
    other = resolve("acme/other")
    assert (other.git, other.reason) == (None, NOT_LINKED)


def test_local_resolver_takes_the_ref_or_the_default_branch(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "b", branch="main").write("a.txt", "1").commit("init")
    g.branch("v2").write("a.txt", "2").commit("two").checkout("main")
    assert local_resolver({"a/b": (str(g.path), None)})("a/b").develop == g.sha("main")
    assert local_resolver({"a/b": (str(g.path), "v2")})("a/b").develop == g.sha("v2")


def test_local_resolver_fails_early_on_a_wrong_path_or_ref(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--link a/b: .* not a git repository"):
        local_resolver({"a/b": (str(tmp_path), None)})
    g = GitBuilder(tmp_path / "b").write("a.txt", "1").commit("init")
    with pytest.raises(UsageError, match="has no nope"):
        local_resolver({"a/b": (str(g.path), "nope")})
