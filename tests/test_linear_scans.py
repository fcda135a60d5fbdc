"""Every scan of PR-controlled text is linear: each regular expression the headings check, the
closing keywords, a template's container lines and the markdown writer apply to PR text (imported
here by name), and each scanner written in place of a backtracking one, reads the input crafted
against it at 16 KB and at 256 KB in one run, and the larger takes at most RATIO times as long.
Sixteen times the text: linear is 16, quadratic 256. A ratio of two timings taken side by side,
never a time; and CPU time, this process's own, so that what else the machine runs meanwhile
does not count.

The list is kept whole: test_every_pattern_is_in_the_list fails on a compiled pattern of one of
GUARDED's modules that no scan here reads.
"""

from __future__ import annotations

import functools
import gc
import importlib
import pkgutil
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType, ModuleType

import pytest

from bot import codespans, textlines, textsearch
from bot.codespans import _RUN_RE, blank_code_spans, code_spans
from bot.memos import Memos
from bot.model import markdown_safe
from bot.model.markdown_safe import (
    _ATX_START_RE,
    _ENTITY_RE,
    _HIDDEN_RE,
    _ORDERED_ITEM_RE,
    code,
    inline,
    prose,
)
from bot.textlines import _YAML_BREAK_RE, capped_lines, git_line, git_lines
from bot.textsearch import find_token
from checks.duplicates import keywords
from checks.duplicates.keywords import _CLOSING, _FENCE, _HTML_COMMENT, closing_issues
from checks.headings import inline_links as inline_links_module
from checks.headings.files import heading_pattern
from checks.headings.filetext import FileText
from checks.headings.forms import (
    _NEXT_WORD_RE,
    _PIECE_RE,
    IN_FILE_RE,
    NAMED_AFTER_RE,
    NAMED_BEFORE_RE,
    PAREN_CLOSE_RE,
    PAREN_OPEN_RE,
    VERB_BEFORE_RE,
    WHITESPACE_RE,
)
from checks.headings.index import FRAGMENT_RE, LEAD_RE
from checks.headings.inline_links import (
    _BRACKET_RE,
    _DESTINATION_END_RE,
    _NOT_SPACE_RE,
    _TITLE_CLOSE,
    inline_links,
)
from checks.headings.mdlinks import (
    AUTOLINK_RE,
    BARE_RE,
    BLOB_URL_RE,
    LINE_ANCHOR_RE,
    REFERENCE_DEF_RE,
    SCHEME_RE,
    anchor_links,
)
from checks.headings.refs import (
    _BREAK_RE,
    _NOT_BLANK_RE,
    LIST_ITEM_RE,
    PATH_RE,
    QUALIFIED_RE,
    QUOTED_RE,
    SECTION_AFTER_RE,
    SECTION_BEFORE_RE,
    SECTION_SIGN_RE,
    SENTENCE_END_RE,
    SIDE_RE,
    _parse_unit,
    references,
)
from checks.headings.refs import BARE_RE as REFS_BARE_RE
from checks.headings.refs import BLOB_URL_RE as REFS_BLOB_URL_RE
from checks.headings.slugs import (
    _A_TAG_RE,
    _CLOSE_BRACKET_RE,
    _CLOSE_PAREN_RE,
    _OPEN_BRACKET_RE,
    _PLACEHOLDER_RE,
    _QUOTE_RE,
    _TAG_END_RE,
    _TAG_START_RE,
    EMPHASIS_RE,
    ID_ATTRIBUTE_RE,
    NAME_ATTRIBUTE_RE,
    _anchors,
    html_anchor_names,
    inline_text,
)
from checks.headings.text import (
    _FENCE_START_RE,
    _HEADING_START_RE,
    _HELM_CLOSE_LINE_RE,
    _HELM_OPENING_RE,
    _HTML_CLOSE_LINE_RE,
    _SPACE_RE,
    ATX_OPEN_RE,
    BLOCK_STAR_RE,
    FENCE_RE,
    HELM_CLOSE_RE,
    HELM_OPEN_RE,
    HTML_CLOSE_RE,
    HTML_OPEN_RE,
    LINE_COMMENT_RE,
    NOT_SETEXT_TEXT_RE,
    SETEXT_RE,
    TOKEN_RE,
    atx_text,
    block_comment_lines,
    caps_heading_span,
    comment_bodies,
    lines_stand_alone,
    markdown_heading_lines,
)
from checks.headings.units import TABLE_DELIMITER_RE, _cut, file_units, prose_units
from checks.kit import template_lines
from checks.kit.template_lines import _DASH, NAME_RE

SMALL, LARGE = 16 * 1024, 256 * 1024
LINEAR_RATIO = LARGE // SMALL  # 16: what a linear scan's time grows by; quadratic: 256
# A scan's cost per character grows where its working set (the text and the objects it makes)
# leaves a core's caches: up to ~2.5 times from 16 KB to 256 KB here (a Markdown table's cut:
# 0.18 us a character at 16 KB, 0.29 at 1 MB and beyond). Three times linear, then: 48, five
# times below quadratic. And a scan whose work is mostly a copy of its text (a title cut out, a
# line blanked) is allowed what copying the same texts costs in the same run, RATIO over
# LINEAR_RATIO times as much.
RATIO = 3 * LINEAR_RATIO
PROBE = SMALL // 16  # read first, so that a scan far from linear is stopped, not waited for
BATCH_SECONDS = 0.02  # runs of a scan timed together until they last this long
TRIES = 3  # the least of this many batches is the scan's time (a busy machine only slows it)

# Where every compiled pattern must be read by a scan below: every module of the headings check,
# and the other scanners of PR text.
HEADINGS = importlib.import_module("checks.headings")
GUARDED: tuple[ModuleType, ...] = (
    *(
        importlib.import_module(f"{HEADINGS.__name__}.{m.name}")
        for m in pkgutil.iter_modules(HEADINGS.__path__)
    ),
    keywords,
    template_lines,
    markdown_safe,
    codespans,
    textlines,
    textsearch,
)

Input = str | Callable[[int], str]  # a unit repeated to the size, or the text of a size


@dataclass(frozen=True)
class Scan:
    name: str
    run: Callable[[str], object]
    inputs: tuple[Input, ...]
    patterns: tuple[re.Pattern[str], ...] = ()


def finditer(pattern: re.Pattern[str], *inputs: Input) -> Scan:
    def run(text: str) -> None:
        for _ in pattern.finditer(text):
            pass

    return Scan(f"{pattern.pattern[:40]!r}.finditer", run, inputs, (pattern,))


def anchored(how: str, pattern: re.Pattern[str], *inputs: Input) -> Scan:
    """A pattern applied once to a line: `match`, `fullmatch` or `search` of a line of LARGE characters."""
    return Scan(f"{pattern.pattern[:40]!r}.{how}", getattr(pattern, how), inputs, (pattern,))


def scan(name: str, run: Callable[[str], object], *inputs: Input) -> Scan:
    return Scan(name, run, inputs)


def uncached(run: Callable[[str], object]) -> Callable[[str], object]:
    """`run` with its memos in a store of their own: a text read again is otherwise a lookup."""

    def fresh(text: str) -> object:
        with Memos().active():  # a store of its own, empty
            return run(text)

    return fresh


def _runs_of_every_length(size: int) -> str:
    """Backtick runs of one, two, three … backticks: none has a partner, and each a length of its
    own (a scan reading every later run from each is n^1.5 here)."""
    out, total, k = [], 0, 1
    while total < size:
        out.append("`" * k + "a")
        total += k + 1
        k += 1
    return "".join(out)[:size]


def _ats_spaces(size: int) -> str:
    return "# a" + " " * (size - 4) + "b"


def _list_markers(size: int) -> str:
    """`- - - … x`: containers all the way, then no block syntax."""
    return "- " * (size // 2 - 1) + "x"


def _quoting_paragraph(size: int) -> str:
    """A paragraph of lines quoting a heading, the one file named at its end: every quote pairs
    with it, in one sentence."""
    line = "see “ALPHA BETA GAMMA” and the words around it\n"
    return line * (size // len(line)) + "in a.yaml\n"


def _references(text: str) -> None:
    for unit in file_units(FileText("docs/a.md", text)):
        references(unit, lambda f: True)


def _spaced_name(size: int) -> str:
    return "name: a" + " " * (size - 8) + "b"


def _blob_urls(size: int) -> str:
    return ("https://github.com/acme/docs/blob/main/docs/" * (size // 43 + 1))[:size]


SCANS: list[Scan] = [
    # checks/headings/text.py
    anchored("match", LINE_COMMENT_RE, "#", " ", " -", "/"),
    anchored("match", HELM_OPEN_RE, " ", "{{ ", "{{-"),
    anchored("search", HELM_CLOSE_RE, "*/ ", "*/", " -"),
    anchored("match", HTML_OPEN_RE, " ", "<!"),
    anchored("search", HTML_CLOSE_RE, "--", "-", "-- >"),
    finditer(_HELM_CLOSE_LINE_RE, "*/ ", "*/\t-", "*/\n"),
    finditer(_HTML_CLOSE_LINE_RE, "--", "- "),
    anchored("fullmatch", _HELM_OPENING_RE, " ", "{{ ", "{{-", " \t"),
    anchored("fullmatch", _SPACE_RE, " ", " x"),
    anchored("match", BLOCK_STAR_RE, " ", " *"),
    anchored("match", ATX_OPEN_RE, "#", " ", " #"),
    anchored("match", SETEXT_RE, "=", "-", "= ", "-x"),
    anchored("match", FENCE_RE, " ", "`", "~"),
    anchored("match", NOT_SETEXT_TEXT_RE, " ", "1", " -", "\t1"),
    finditer(TOKEN_RE, "`", "`a", "` ", "a ", "` a"),
    finditer(_HEADING_START_RE, "\n", "\n #", "\n   "),
    finditer(_FENCE_START_RE, "\n``", "\n ~~", "\n", "\n```"),
    scan("atx_text", atx_text, _ats_spaces, "# a ", "# #", "#"),
    scan("comment_bodies", comment_bodies, "# AB CD EF\n", "{{/* x\n", "<!-- a\n", "#\n*/}}\n"),
    scan("block_comment_lines", block_comment_lines, "{{/* x\n", "<!--\n", "/*", " /* */}}\n"),
    scan(
        "markdown_heading_lines",
        uncached(markdown_heading_lines),
        "# a\n",
        "=\n",
        "```\n",
        "a\n---\n",
    ),
    scan("caps_heading_span", caps_heading_span, "AB CD ", "`a` ", "AB—", "A"),
    scan("lines_stand_alone", lambda t: lines_stand_alone(t, False), "/* ", "<!-- ", "\n /*"),
    # checks/headings/mdlinks.py and inline_links.py
    finditer(REFERENCE_DEF_RE, "[", "[a]: ", " ", "<"),
    finditer(AUTOLINK_RE, "<https://", "<http://a", "<"),
    finditer(BLOB_URL_RE, _blob_urls, "https://github.com/a/b/blob/c/d?", "https://github.com/"),
    finditer(BARE_RE, "a/", "a.md", " a.md#", "(a.md#a", "a."),
    anchored("match", LINE_ANCHOR_RE, "L1", "L1-L", "1"),
    anchored("match", SCHEME_RE, "a", "//", "a+"),
    finditer(_BRACKET_RE, "[", "a"),
    finditer(_NOT_SPACE_RE, " ", "a"),
    finditer(_DESTINATION_END_RE, "a", ")"),
    *(finditer(p, c, "a") for c, p in _TITLE_CLOSE.items()),
    scan("inline_links", inline_links, "[", "[](", "](", "[[", "![", "[a](b ", '[a](b "'),
    scan("inline_links (titles)", inline_links, "[a](b (", "[a](<", "[a](b)", "[a](b '"),
    scan("anchor_links", lambda t: anchor_links("docs/a.md", [t]), "[](", "`", "<a ", "#[["),
    scan("anchor_links (urls)", lambda t: anchor_links("docs/a.md", [t]), _blob_urls, "a.md#"),
    # checks/headings/slugs.py
    finditer(EMPHASIS_RE, "*_", "a_", "_", "_a", "*"),
    *(finditer(p, "[", "]", ")", ">", "a") for p in (_OPEN_BRACKET_RE, _CLOSE_BRACKET_RE)),
    *(finditer(p, ")", ">", "'", "a") for p in (_CLOSE_PAREN_RE, _TAG_END_RE, _QUOTE_RE)),
    finditer(_TAG_START_RE, "<", "</", "<a", "</a"),
    anchored("match", _A_TAG_RE, "<a ", "<"),
    finditer(NAME_ATTRIBUTE_RE, "name=", "name= ", "name='", 'name="a', "name"),
    finditer(ID_ATTRIBUTE_RE, " id=", " id='", " id= ", " id"),
    finditer(_PLACEHOLDER_RE, "\0", "\x001", "\x001\x00"),
    scan("inline_text", inline_text, "[", "`", "<a", "[a](", "![", "*_", "[a][", "<a>"),
    scan("html_anchor_names", html_anchor_names, "<a ", "<a name=", "<a name='", '<b id="x'),
    scan("html_anchor_names (tags)", html_anchor_names, "<", "<<a", "<a name='a' ", "<a>"),
    scan("anchors", uncached(_anchors), "# a\n", "<a name='x'>\n", "<a \n", "# `a`\n"),
    # checks/headings/refs.py and forms.py
    finditer(REFS_BLOB_URL_RE, _blob_urls, "https://github.com/a/"),
    finditer(QUALIFIED_RE, "a/b:", " a/b:c.yaml", "a-/", " a/b:c/"),
    finditer(PATH_RE, " a/", " a.b", "(a.b.c", " a.b/", "a"),
    finditer(QUOTED_RE, '"', "“", "'", " 'a", "`", "“a", "”“", "'a'b "),
    finditer(REFS_BARE_RE, "A ", "A", "A-", "A a", "A'", "A\t"),
    finditer(SECTION_SIGN_RE, "§ ", "§", "§a", "§ \t"),
    anchored("search", SECTION_BEFORE_RE, "section ", "§ ", " ", "heading\t"),
    anchored("match", SECTION_AFTER_RE, " ", "\t", " section"),
    anchored("match", SIDE_RE, " ", " (above", "\t("),
    finditer(LIST_ITEM_RE, "\n ", "\n1", "\n-", "\n 1."),
    finditer(SENTENCE_END_RE, ". ", "?", ".", "a"),
    finditer(_BREAK_RE, "\n", "a"),
    finditer(_NOT_BLANK_RE, " ", "\t", "a"),
    anchored("search", NAMED_BEFORE_RE, "heading ", "§ ", "section: ", " "),
    anchored("match", NAMED_AFTER_RE, " ", " heading"),
    anchored("search", VERB_BEFORE_RE, "see ", " per the ", "according to ", "see the "),
    anchored("match", IN_FILE_RE, " in ", "heading ", " "),
    anchored("match", PAREN_OPEN_RE, " (", " ", "(see "),
    anchored("match", PAREN_CLOSE_RE, " ", "\t"),
    finditer(WHITESPACE_RE, " \t", "a ", " "),
    finditer(_NEXT_WORD_RE, " ", "a"),
    finditer(_PIECE_RE, " a", "a", " "),
    scan("_parse_unit", lambda t: _parse_unit((t,), 1, True), "“ALPHA BETA” (a.yaml) ", "“"),
    scan("_parse_unit (bare)", lambda t: _parse_unit((t,), 1, True), "AB CD EF GH ", "§ ", '"A'),
    scan("references", uncached(_references), _quoting_paragraph, "“ALPHA BETA” (see a.yaml) "),
    scan("heading_pattern", heading_pattern(["ALPHA BETA GAMMA DELTA"]).finditer, "ALPHA "),
    # checks/headings/index.py and units.py
    finditer(FRAGMENT_RE, "#", "#a", "#-", "a"),
    anchored("match", LEAD_RE, "a", "-", "#"),
    anchored("fullmatch", TABLE_DELIMITER_RE, "  ", "|-", "| - ", "-:", " |", "\t"),
    scan(
        "prose_units", uncached(prose_units), "“A B” x.md ", "## a\n", "```\n", "| a |\n", "AB CD. "
    ),
    scan(
        "_cut (markdown)",
        uncached(lambda t: _cut(True, True, t)),
        "| a |\n|-|\n",
        "# A B\n",
        "<!--\n",
    ),
    scan(
        "_cut (template)",
        uncached(lambda t: _cut(False, False, t)),
        "{{/*\n",
        "# AB CD EF\n",
        "a: 1\n",
    ),
    # checks/duplicates/keywords.py
    finditer(
        _CLOSING, "fix ", "fixes #", "fix a/", "fix https://github.com/", "close a-", "fix #1"
    ),
    anchored("match", _FENCE, "`", " ~", " "),
    finditer(_HTML_COMMENT, "<!--", "<!-", "-->", "<"),
    scan("closing_issues", closing_issues, "`", "<!--", "```\n", "fix #1 ", _runs_of_every_length),
    # checks/kit/template_lines.py: a template's lines
    anchored("match", NAME_RE, _spaced_name, "name: ", "name:#"),
    anchored("match", _DASH, " ", "- ", "-\t"),
    # bot/model/markdown_safe.py
    finditer(_HIDDEN_RE, "\x00", "a"),
    finditer(_ENTITY_RE, "&#", "&a", "&#x", "&"),
    anchored("match", _ORDERED_ITEM_RE, "1", "1."),
    anchored("match", _ATX_START_RE, "#", "# "),
    scan("prose", prose, "- ", "> ", "`", "`a", "@a", "<", "&#64;", "- - ", "1. ", "\\`"),
    scan("prose (runs)", prose, _runs_of_every_length, _list_markers, "##[", " ::", "]("),
    scan("inline", inline, "\n", "a\n::"),
    scan("code", code, "`", "a", _runs_of_every_length),
    # bot/codespans.py, bot/textlines.py, bot/textsearch.py
    finditer(_RUN_RE, "`", "`a"),
    scan("code_spans", code_spans, "`", "`a", "`` a", "` ``", _runs_of_every_length),
    scan("blank_code_spans", blank_code_spans, "`a` ", "``"),
    finditer(_YAML_BREAK_RE, "\r\n", "\u2028", "a"),
    scan("git_lines", git_lines, "\n", "a", "\r\n", "\x0c"),
    scan("capped_lines", lambda t: capped_lines(t, 4096), "a", "\n", "a\n"),
    scan("git_line", lambda t: git_line(t, len(t)), "\u2028", "a\n", "\r\n"),
    scan("find_token", lambda t: find_token(t, "/*"), "*", "/", "/a*"),
]


class _TooSlow(Exception):
    pass


@contextmanager
def _at_most(seconds: float) -> Iterator[None]:
    """Interrupted after `seconds` of this process's CPU time (a scan far from linear is stopped,
    not waited for): the regular expression engine checks for signals as it runs."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# Pairs of timings taken again when the first says a scan is not linear.
RETRIES = 3


def _text(source: Input, size: int) -> str:
    if callable(source):
        return source(size)
    return (source * (size // len(source) + 1))[:size]


def _seconds(run: Callable[[str], object], text: str, limit: float, tries: int = TRIES) -> float:
    """The least, over `tries` batches, of a run's time; _TooSlow past `limit` seconds in all."""
    best = float("inf")
    with _at_most(limit):
        for _ in range(tries):
            runs, start = 0, time.process_time()
            while time.process_time() - start < BATCH_SECONDS or not runs:
                run(text)
                runs += 1
            best = min(best, (time.process_time() - start) / runs)
    return best


def _ratio(run: Callable[[str], object], source: Input) -> tuple[float, float]:
    """LARGE's time over SMALL's, and the ratio it must stay under. Each size is allowed four times
    RATIO times the one before it (and a second at least) before the scan is stopped as not
    linear."""
    probe = _seconds(run, _text(source, PROBE), limit=60, tries=1)
    small_text, large_text = _text(source, SMALL), _text(source, LARGE)
    small = _seconds(run, small_text, limit=max(1.0, 4 * RATIO * probe))
    limit = max(1.0, 4 * RATIO * small)
    bar = RATIO * max(1.0, _copying() / LINEAR_RATIO)
    ratio = _seconds(run, large_text, limit, tries=1) / small
    # A busy machine (the other test worker, another job) slows one size and not the other: both
    # sizes again, back to back, the best of a few pairs. A scan that is not linear stays far
    # above the bar in every pair (quadratic on 16x the text is ~256x), so retrying hides none.
    for _ in range(RETRIES):
        if ratio < bar:
            break
        small = _seconds(run, small_text, limit=max(1.0, 4 * RATIO * probe))
        ratio = min(ratio, _seconds(run, large_text, limit, tries=1) / small)
    return ratio, bar


@functools.cache
def _copying() -> float:
    """What copying LARGE characters costs here, over copying SMALL."""
    small, large = "a" * SMALL, "a" * LARGE
    return _seconds(_copy, large, 60) / _seconds(_copy, small, 60)


def _copy(text: str) -> str:
    return text[1:]


@pytest.mark.parametrize("item", SCANS, ids=[s.name for s in SCANS])
def test_each_scan_of_pr_text_is_linear(item: Scan) -> None:
    gc.collect()
    gc.disable()  # a collection inside one timing and not the other is no property of the scan
    try:
        for source in item.inputs:
            label = getattr(source, "__name__", repr(source))
            try:
                ratio, bar = _ratio(item.run, source)
            except _TooSlow:
                pytest.fail(f"{item.name} on {label}: stopped, far slower than linear")
            assert ratio < bar, (
                f"{item.name} on {label}: {LARGE} characters took {ratio:.0f}x {SMALL}'s time"
            )
    finally:
        gc.enable()


def _patterns(module: ModuleType) -> Iterator[tuple[str, re.Pattern[str]]]:
    for name, value in vars(module).items():
        values = value.values() if isinstance(value, dict) else value
        for item in values if isinstance(values, tuple | list | type({}.values())) else (value,):
            found = item if isinstance(item, re.Pattern) else None
            if isinstance(item, tuple):  # text.py's _OPENINGS: (token, before, closer)
                yield from ((name, p) for p in item if isinstance(p, re.Pattern))
            elif found is not None:
                yield name, found


def test_every_pattern_is_in_the_list() -> None:
    covered = {id(p) for s in SCANS for p in s.patterns}
    missing = [
        f"{module.__name__}.{name}"
        for module in GUARDED
        for name, pattern in _patterns(module)
        if id(pattern) not in covered
    ]
    assert missing == [], "add a scan of each to SCANS, with the input crafted against it"
    assert {m.__name__ for m in GUARDED} >= {inline_links_module.__name__}


def _quadratic(text: str) -> None:
    """From every 64th character, a count to the end: quadratic at C speed, so cheap to time."""
    for start in range(0, len(text), 64):
        text.count("a", start)


def test_the_bar_tells_a_quadratic_scan_from_a_linear_one() -> None:
    """The harness itself: a quadratic scan is stopped or over the bar, and a linear scan of the
    same text is under it."""
    try:
        ratio, bar = _ratio(_quadratic, "a")
    except _TooSlow:
        ratio, bar = float("inf"), 0.0
    assert ratio >= bar
    ratio, bar = _ratio(lambda text: text.count("a"), "a")
    assert ratio < bar
