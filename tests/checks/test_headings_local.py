"""The lines a diff touches, read without the rest of their file, say what the whole file says:
checks/headings/units.py (file_units of wanted lines) and removals.py (whether a removed line may
hold a heading), where checks/headings/text.py's lines_stand_alone lets them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.textlines import git_lines
from checks.headings import filetext, units
from checks.headings.files import heading_pattern
from checks.headings.filetext import FileText, StretchedLines
from checks.headings.refs import Unit, parse_unit
from checks.headings.removals import _lines_holding, _may_remove
from checks.headings.text import find_headings, is_markdown, lines_stand_alone
from checks.headings.units import PROSE_SUFFIXES, file_units

# Lines of values files, templates and scripts: comments of every prefix, ALL-CAPS headings with
# banners, code spans and dashes, code, blank lines; and what makes a line depend on others
# (block comments, Markdown) or a line break other than `\n`.
LINES = [
    *("# enable the thing", "## SECTION ONE TITLE", "# ALPHA BETA — then prose", "#", ""),
    *("  # === BANNER HEADING TEXT ===", "# `CODE` HEADING WORDS here", "#!/bin/sh", "##! x"),
    *("// WHY THIS EXISTS", "-- MIGRATION ORDER MATTERS: x", "--flag", "# see README.md TITLE"),
    *("key: value", "  - item", "path: /etc/config/*.tmpl", "  # NOTE: TODO", "# A--B CD EF"),
    *("# See “UPGRADE NOTES” in README.md", "#   ", "x: y # TRAILING COMMENT HERE", "\t# tab"),
]
DEPENDENT = ["{{/* BLOCK HEADING ONE", "*/}}", "  {{- /* x */ -}}", "<!-- NOTE HERE -->", "<!--"]
# Block comments of every shape: banners, starred lines, one-line ones, openers inside a block,
# a block opened after another closes on its line, a closer cut by a line break, underlines.
BLOCKS = [
    *("{{/*", "  * STARRED HEADING LINE", " * see “BLOCK HEADING ONE” in x.tpl", "*/ -}}", "}}"),
    *("{{- /* ONE LINE HEADING HERE */ -}}", "*/}} {{/* AFTER CLOSE", "  {{/* NESTED OPEN", "-->"),
    *("<!-- HTML BANNER TEXT", "===", "---", "   ", "*/", "{{/* x */}} {{/* y", "  {{-/* z */}}"),
]
BREAKS = ["\r", "\x85", "\u2028", "\x0c"]
PATHS = ["values.yaml", "templates/x.tpl", "run.sh", "README.md", "notes.txt"]


@st.composite
def _file(draw: st.DrawFn) -> tuple[str, str, frozenset[int]]:
    pool = draw(st.sampled_from([LINES, LINES, LINES + DEPENDENT]))
    lines = draw(st.lists(st.sampled_from(pool), min_size=0, max_size=25))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    if "\n" in text and draw(st.integers(0, 3)) == 0:  # a line ended otherwise
        at = draw(st.sampled_from([i for i, c in enumerate(text) if c == "\n"]))
        text = text[:at] + draw(st.sampled_from(BREAKS)) + text[at + 1 :]
    wanted = draw(st.frozensets(st.integers(0, len(lines) + 2), max_size=8))
    return draw(st.sampled_from(PATHS)), text, wanted


def whole_file_units(path: str, text: str, wanted: frozenset[int]) -> list[Unit]:
    """file_units as it reads a whole file: every piece cut, those holding a wanted line kept."""
    pieces = units._cut(is_markdown(path), path.lower().endswith(PROSE_SUFFIXES), text)
    return [
        parse_unit(block, start + 1, bare)
        for start, block, bare in pieces
        if any(n in wanted for n in range(start + 1, start + 1 + len(block)))
    ]


@settings(max_examples=400, deadline=None, database=None, print_blob=True)
@given(_file())
def test_the_wanted_lines_units_are_the_whole_files(case: tuple[str, str, frozenset[int]]) -> None:
    path, text, wanted = case
    assert file_units(FileText(path, text), wanted) == whole_file_units(path, text, wanted)


@st.composite
def _template(draw: st.DrawFn) -> tuple[str, str, frozenset[int]]:
    """Templates and scripts whose block comments tie their lines together, longer."""
    lines = draw(st.lists(st.sampled_from(LINES + DEPENDENT + BLOCKS * 2), max_size=60))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    wanted = draw(st.frozensets(st.integers(0, len(lines) + 2), max_size=8))
    return draw(st.sampled_from(["templates/x.tpl", "run.sh", "values.yaml"])), text, wanted


@settings(max_examples=800, deadline=None, database=None, print_blob=True)
@given(_template())
def test_a_templates_wanted_lines_with_block_comments_are_the_whole_files(
    case: tuple[str, str, frozenset[int]],
) -> None:
    path, text, wanted = case
    assert file_units(FileText(path, text), wanted) == whole_file_units(path, text, wanted)


def test_a_template_with_block_comments_is_cut_by_the_stretches_it_touches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    block = "{{/*\nHELPER NAME HERE\nsee “OTHER HELPER” in _helpers.tpl\n*/}}\n"
    code = "".join(f"key{n}: value  # see README.md\n" for n in range(400))
    text = block + "\n" + code + "\n" + block.replace("OTHER", "THIRD") + "\n" + code
    cut: list[str] = []
    real = units._cut
    monkeypatch.setattr(units, "_cut", lambda m, p, t: cut.append(t) or real(m, p, t))
    wanted = frozenset({3, 408})  # in the first block comment, and in the second
    assert file_units(FileText("templates/x.tpl", text), wanted) == whole_file_units(
        "templates/x.tpl", text, wanted
    )
    *stretches, whole = cut
    assert whole == text  # whole_file_units's
    assert stretches == [block, block.replace("OTHER", "THIRD")]


@settings(max_examples=400, deadline=None, database=None, print_blob=True)
@given(_file())
def test_a_removed_heading_is_never_missed(case: tuple[str, str, frozenset[int]]) -> None:
    path, text, removed = case
    if any(h.line in removed for h in find_headings(path, text)):
        assert _may_remove(FileText(path, text), removed)


def test_a_values_file_is_read_by_its_lines_a_template_with_block_comments_whole() -> None:
    values = "# SECTION TITLE HERE\nimage: x\npath: /etc/*.tmpl\n<b>: 1\n"
    assert lines_stand_alone(values, markdown=False)
    assert not lines_stand_alone("{{/* NOTE HERE */}}\n" + values, markdown=False)
    assert not lines_stand_alone("a: 1\n  <!-- open\n", markdown=False)
    assert not lines_stand_alone(values, markdown=True)  # fences and setext underlines
    # Lines are git's: a carriage return (or a form feed, U+2028) breaks none, so what follows it on
    # its line opens no block comment.
    assert lines_stand_alone(values.replace("\n", "\r\n"), markdown=False)
    hidden = "a: 1\r{{/*\n# SECTION TITLE HERE\n  see README.md\n*/}}\n"
    assert lines_stand_alone(hidden, markdown=False)
    wanted = frozenset({2, 3})
    assert file_units(FileText("x.tpl", hidden), wanted) == whole_file_units(
        "x.tpl", hidden, wanted
    )
    # A removal of values alone reads no heading; of the heading line, it may remove one.
    assert not _may_remove(FileText("values.yaml", values), frozenset({2, 3}))
    assert _may_remove(FileText("values.yaml", values), frozenset({1}))
    # With block comments, a removal is read whole only where its lines have a heading's capitals.
    template = "{{/* NOTE HERE */}}\n" + values
    assert not _may_remove(FileText("templates/x.yaml", template), frozenset({3, 4}))
    assert _may_remove(
        FileText("templates/x.yaml", "{{/*\nSECTION TITLE HERE\n*/}}\n"), frozenset({2})
    )


def test_a_comment_block_around_an_added_line_is_one_unit_with_its_heading_blanked() -> None:
    text = "a: 1\n# UPGRADE NOTES FIRST\n# see the README.md\n# section “X Y”\nb: 2\n"
    [unit] = file_units(FileText("values.yaml", text), frozenset({3}))
    assert unit.first_line == 2
    assert "UPGRADE NOTES" not in unit.text and "see the README.md" in unit.text


@settings(max_examples=300, deadline=None, database=None, print_blob=True)
@given(
    st.lists(st.text(alphabet="ab’ #\r\x0c\u2028", max_size=6), max_size=30),
    st.booleans(),
    st.data(),
)
def test_a_long_texts_lines_are_cut_as_git_cuts_them(
    lines: list[str], ended: bool, data: st.DataObject
) -> None:
    text = "\n".join(lines) + ("\n" if ended and lines else "")
    whole = git_lines(text)
    stretch = filetext.STRETCH_CHARS
    try:
        for filetext.STRETCH_CHARS in (0, 1, 7, stretch):  # a stretch a line, a few, all of it
            cut = StretchedLines(text)
            assert len(cut) == len(whole) and list(cut) == whole
            lo = data.draw(st.integers(-3, len(whole) + 3))
            hi = data.draw(st.integers(-3, len(whole) + 3))
            assert cut[lo:hi] == whole[lo:hi]
            if whole:
                assert cut[-1] == whole[-1]
            with pytest.raises(IndexError):
                cut[len(whole)]
    finally:
        filetext.STRETCH_CHARS = stretch


def test_a_long_file_is_read_by_its_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filetext, "CHUNKED_CHARS", 1000)
    monkeypatch.setattr(filetext, "STRETCH_CHARS", 200)
    text = (
        "".join(f"field{n}: value {n}\n" for n in range(400))
        + "# see “SOME HEADING” in README.md\n"
    )
    file = FileText("crd.yaml", text)
    assert isinstance(file.lines, StretchedLines)
    [unit] = file_units(file, frozenset({401}))
    assert unit.first_line == 401 and "SOME HEADING" in unit.text
    assert len(file.lines._stretches) == 1  # the stretch of line 401 alone was cut into lines
    assert file_units(file, frozenset({401})) == whole_file_units(
        "crd.yaml", text, frozenset({401})
    )
    # A carriage return breaks no line: the text is still read a stretch at a time.
    odd = FileText("crd.yaml", text + "a\rb\x0cc\n")
    assert isinstance(odd.lines, StretchedLines) and list(odd.lines) == git_lines(odd.text)


HEADINGS = ["SECTION ONE TITLE", "UPGRADE NOTES", "ALPHA BETA", "Values", "X Y"]
# Lines quoting them, split across lines, or holding a first word alone.
QUOTING = [
    *(f"# see “{h}” in README.md" for h in HEADINGS),
    *(f"the “{h}” section of values.yaml" for h in HEADINGS),
    *("# see “ALPHA", "# BETA” in README.md", "“UPGRADE", "NOTES” (above)", "# ALPHA only"),
    *("## Values", "X and Y", "Values: see README.md", "  # X", "  # Y in x.tpl"),
]


@st.composite
def _quoting_file(draw: st.DrawFn) -> tuple[str, str]:
    pool = draw(st.sampled_from([LINES + QUOTING, QUOTING + DEPENDENT, QUOTING]))
    lines = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=30))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    if draw(st.integers(0, 5)) == 0:  # a line ended otherwise: read whole
        text = text.replace("\n", draw(st.sampled_from(BREAKS)), 1)
    return draw(st.sampled_from(PATHS)), text


@settings(max_examples=500, deadline=None, database=None, print_blob=True)
@given(_quoting_file(), st.lists(st.sampled_from(HEADINGS), min_size=1, max_size=3))
def test_the_units_that_may_quote_a_heading_are_found_by_its_first_words_lines(
    case: tuple[str, str], removed: list[str]
) -> None:
    """quoting_files cuts only the units with a line holding a removed heading's first word, and
    reads of those the ones holding all its words: the units of the whole file that do."""
    path, text = case
    file = FileText(path, text)
    words = heading_pattern(removed, whole_words=False)
    first = re.compile("|".join(re.escape(r.split()[0]) for r in removed))
    lines = _lines_holding(text, first)
    whole = [u for u in file_units(FileText(path, text)) if words.search(u.text)]
    assert file_units(file, lines, holding=words) == whole
