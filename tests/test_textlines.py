"""bot/textlines.py numbers lines as git and GitHub do, maps YAML's lines to git's, and is the only
way file text is cut into lines: no `.splitlines(` in bot/, checks/ or webhooks/ but on the few
texts listed here, which are never a file's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.textlines import capped_lines, git_line, git_lines, line_at, line_count

ROOT = Path(__file__).resolve().parents[1]
# Every `.splitlines(` left, by module and the function it is in: each reads a text that no line
# number is ever taken from, only a message's first or last line.
SPLITLINES_ALLOWED = {
    ("bot/app/review_pull.py", "failure_reason"): "an exception's message, for its first line",
    ("bot/git/process.py", "_failed"): "git's stderr, for an error message",
    ("bot/git/fetch.py", "run_git"): "git's stderr, for an error message",
    ("bot/render/confine.py", "_landlock"): "an OSError's message, for its first line",
    ("bot/render/render_process.py", "_death"): "a render process's stderr, for its first line",
    ("webhooks/app.py", "_describe"): "an exception's message, for its first line",
    ("bot/render/deps/process.py", "_crashed"): "a fetch process's stderr, for its last line",
}
# Characters str.splitlines breaks at and git does not.
ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _splitlines_calls() -> list[tuple[str, str, int]]:
    found = []
    for top in ("bot", "checks", "webhooks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            for func, node in _calls(tree):
                if isinstance(node.func, ast.Attribute) and node.func.attr == "splitlines":
                    found.append((path.relative_to(ROOT).as_posix(), func, node.lineno))
    return found


def _calls(tree: ast.AST, func: str = "") -> list[tuple[str, ast.Call]]:
    out = []
    for child in ast.iter_child_nodes(tree):
        inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else func
        if isinstance(child, ast.Call):
            out.append((func, child))
        out += _calls(child, inner)
    return out


def test_no_file_text_is_cut_by_splitlines() -> None:
    calls = _splitlines_calls()
    unlisted = [c for c in calls if (c[0], c[1]) not in SPLITLINES_ALLOWED]
    assert unlisted == [], "cut file text with bot.textlines.git_lines, not str.splitlines"
    # The list stays short and true: each entry is still there.
    assert {(c[0], c[1]) for c in calls} == set(SPLITLINES_ALLOWED)


@settings(max_examples=500, deadline=None, database=None, print_blob=True)
@given(st.text(alphabet="ab \n" + ODD_BREAKS, max_size=40))
def test_lines_are_cut_at_line_feeds_alone(text: str) -> None:
    lines = git_lines(text)
    assert (
        len(lines)
        == line_count(text)
        == (text.count("\n") + (not text.endswith("\n")) if text else 0)
    )
    assert "".join(git_lines(text, keepends=True)) == text
    assert [line.rstrip("\n") for line in git_lines(text, keepends=True)] == lines
    assert all("\n" not in line for line in lines)
    if not any(c in text for c in ODD_BREAKS):
        assert lines == text.splitlines()
    for offset in range(len(text)):
        assert lines[line_at(text, offset) - 1] == text.split("\n")[text.count("\n", 0, offset)]


def test_a_crlf_line_ends_in_its_carriage_return_as_git_diff_shows_it() -> None:
    assert git_lines("a: 1\r\nb: 2\r\n") == ["a: 1\r", "b: 2\r"]
    assert git_lines("\f\f\fx\n") == ["\f\f\fx"]
    assert git_lines("") == [] and git_lines("\n") == [""] and git_lines("a\n\n") == ["a", ""]


@pytest.mark.parametrize("loader", [yaml.SafeLoader, getattr(yaml, "CSafeLoader", yaml.SafeLoader)])
@pytest.mark.parametrize("odd", ["\u2028", "\x85", "\u2029", "\r", "\r\n"])
def test_a_yaml_marks_line_is_mapped_to_gits(loader: type[yaml.SafeLoader], odd: str) -> None:
    """PyYAML and libyaml break lines at NEL, U+2028, U+2029 and `\\r` too: the line a mark names
    is past git's by one for each of them before it."""
    text = f'a: "x{odd}y{odd}z"\nb: 1\nc: d: e\nf: 1\n'
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.load(text, Loader=loader)  # noqa: S506 - the safe loaders only
    mark = raised.value.problem_mark  # type: ignore[attr-defined]
    assert git_lines(text)[git_line(text, mark.line) - 1] == "c: d: e"


def test_a_mark_at_the_streams_end_is_the_line_after_the_last_as_the_parser_says() -> None:
    text = 'a: "x\u2028y"\nb: [\n'
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.safe_load(text)
    assert raised.value.problem_mark.line == 3  # type: ignore[attr-defined]
    assert git_line(text, raised.value.problem_mark.line) == 3  # git's line 3: after `b: [`


def test_a_line_longer_than_the_cap_is_cut_to_it_and_named() -> None:
    assert capped_lines("ab\ncdef\ng\n", 3) == ("ab\ncde\ng\n", (2,))
    assert capped_lines("abc\nabc", 3) == ("abc\nabc", ())
    assert capped_lines("abcd", 3) == ("abc", (1,))
    long = "x" * 10 + "\n"
    assert capped_lines(long * 5 + "y" * 12 + "\n" + long, 11) == (
        long * 5 + "y" * 11 + "\n" + long,
        (6,),
    )


@settings(max_examples=400, deadline=None, database=None, print_blob=True)
@given(st.lists(st.integers(0, 9), max_size=12), st.integers(1, 8))
def test_the_long_lines_are_the_ones_cut(widths: list[int], cap: int) -> None:
    text = "\n".join("x" * w for w in widths)
    capped, cut = capped_lines(text, cap)
    assert cut == tuple(n for n, w in enumerate(widths, start=1) if w > cap)
    assert git_lines(capped) == [line[:cap] for line in git_lines(text)]
