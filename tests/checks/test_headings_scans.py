"""The one-pass scanners that replaced backtracking patterns on PR text (bot/codespans.py,
checks/headings/inline_links.py, slugs.py's links, tags and HTML anchors): each finds what the rule
it follows finds, held to a plain reading of that rule (or to the pattern it replaced, where the
two agree on every input)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.codespans import BacktickRuns, blank_code_spans, code_spans
from checks.headings.inline_links import inline_links
from checks.headings.mdlinks import anchor_links
from checks.headings.slugs import _link_texts, _without_tags, html_anchor_names, inline_text

FUZZ = settings(
    max_examples=3000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


def _reference_spans(text: str) -> list[tuple[int, int]]:
    """CommonMark's code spans read the plain way: from each backtick run in turn, the next run of
    the same length closes it, else the run is literal."""
    runs = [(m.start(), m.end()) for m in re.finditer("`+", text)]
    spans, k = [], 0
    while k < len(runs):
        start, end = runs[k]
        close = next(
            (j for j in range(k + 1, len(runs)) if runs[j][1] - runs[j][0] == end - start), None
        )
        if close is None:
            k += 1
            continue
        spans.append((start, runs[close][1]))
        k = close + 1
    return spans


@FUZZ
@given(st.text(alphabet="`a \n", max_size=30))
def test_code_spans_are_commonmarks(text: str) -> None:
    assert [(s.start, s.end) for s in code_spans(text)] == _reference_spans(text)


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("`a` and ``b`c``", [(0, 3), (8, 15)]),
        ("```", []),  # a run with no partner is literal: the old pattern read it as a span
        ("`a``", []),
        ("`` ` ``", [(0, 7)]),
        ("x `a` `", [(2, 5)]),
    ],
)
def test_code_span_examples(text: str, spans: list[tuple[int, int]]) -> None:
    assert [(s.start, s.end) for s in code_spans(text)] == spans


def test_a_closing_run_is_found_by_its_length() -> None:
    runs = BacktickRuns("` `` ``` `` `")
    assert (runs.closing(0, 2), runs.closing(3, 2), runs.closing(7, 3), runs.closing(0, 4)) == (
        2,
        9,
        None,
        None,
    )
    assert blank_code_spans("see `x.md#a` and x.md#b") == "see   and x.md#b"


# The pattern inline links were read by, for the texts where CommonMark's bracket pairing and its
# one level of nested brackets agree: no bracket stands outside a link.
_OLD_INLINE_LINK_RE = re.compile(
    r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"
)
_LINK_PIECES = [
    *("[a](x.md#b)", "[a b](<x.md#c>)", '[t](x.md#d "title")', "[t](x.md#e 'q')", "[t](y.md (p))"),
    *("[t](## Title)", "[t]( x.md#f )", "![img](p.png)", "[[n]](x.md#g)", "[t](x.md#h"),
    *(" ", "text", "(", ")", '"', "'", "<", ">", "#", "!", "`"),
]


@FUZZ
@given(st.lists(st.sampled_from(_LINK_PIECES), max_size=10).map("".join))
def test_inline_links_are_the_patterns_where_brackets_do_not_nest(text: str) -> None:
    old = [(m.start(), m.end(), m.group(1)) for m in _OLD_INLINE_LINK_RE.finditer(text)]
    assert [tuple(link) for link in inline_links(text)] == old


def test_a_link_inside_a_link_is_the_link() -> None:
    """CommonMark: links do not nest, the inner one is the link, the outer brackets text."""
    assert [link.destination for link in inline_links("[[a](x.md#in)](y.md#out)")] == ["x.md#in"]
    assert [link.destination for link in inline_links("[![i](p.png)](y.md#out)")] == ["y.md#out"]
    assert inline_links('[a](x.md#b "t]") [c](d.md#e)')[1].destination == "d.md#e"


# The patterns a heading's links and tags were dropped by: the scanners say exactly what they say.
_OLD_IMAGE_OR_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]")
_OLD_HTML_TAG_RE = re.compile(r"</?[A-Za-z][^>]*>")


@FUZZ
@given(st.text(alphabet="[]()!a ", max_size=20))
def test_links_give_their_text_as_the_pattern_did(text: str) -> None:
    expected = _OLD_IMAGE_OR_LINK_RE.sub(lambda m: m.group(1) or m.group(2) or "", text)
    assert _link_texts(text) == expected


@FUZZ
@given(st.text(alphabet="<>/aB1 ", max_size=20))
def test_tags_are_dropped_as_the_pattern_did(text: str) -> None:
    assert _without_tags(text) == _OLD_HTML_TAG_RE.sub("", text)


@pytest.mark.parametrize(
    ("line", "names"),
    [
        ('<a name="legacy"></a> <div id="raw-id">x</div>', ["legacy", "raw-id"]),
        ('<a id="i" name="n">', ["n"]),  # an <a>'s name first, as GitHub's anchor
        ('<A NAME="up">', ["up"]),
        ('<a name="" name="second">', ["second"]),
        ("<span id='q'>", ["q"]),
        ('<a name="x>y">', ["x>y"]),
        ("<a <a <a name=", []),
        ("<b title=\"<a name='no'>\">", []),  # inside another tag's attribute: text, not a tag
    ],
)
def test_html_anchors(line: str, names: list[str]) -> None:
    assert html_anchor_names(line) == names


def test_a_heading_renders_as_before() -> None:
    heading = "Foo & Bar: *now* [with](https://x.io) _emphasis_ <b>x</b> `a` ![img](p) [r][ref]"
    assert inline_text(heading) == "Foo & Bar: now with emphasis x a img r"


def test_a_blob_url_without_an_anchor_is_read_once_and_leaves_the_others() -> None:
    url = "https://github.com/acme/docs/blob/main/a.md"
    line = f"{url}?plain=1 {url}#usage [x](b.md#c)"
    found = [(k.repo, k.path, k.anchor) for k in anchor_links("docs/x.md", [line])]
    assert found == [("acme/docs", "a.md", "usage"), (None, "docs/b.md", "c")]
