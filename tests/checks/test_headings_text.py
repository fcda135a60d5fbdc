"""What a heading is and what a reference is: checks/headings/text.py and checks/headings/refs.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.textlines import git_lines
from checks.headings import refs as refs_module
from checks.headings.filetext import FileText
from checks.headings.refs import (
    SECTION_AFTER_RE,
    SECTION_BEFORE_RE,
    FileRef,
    Reference,
    Unit,
    _FileSpan,
    _Mention,
    _section_before,
    _section_title,
    _Spans,
    blank,
    blank_all,
    parse_unit,
    references,
)
from checks.headings.text import (
    SETEXT_RE,
    Heading,
    _setext_text,
    atx_text,
    comment_bodies,
    comment_heading,
    fenced_lines,
    find_headings,
    markdown_heading_lines,
)
from checks.headings.units import file_units, prose_units


def heading_of(line: str) -> str | None:
    [body] = comment_bodies(line)
    return None if body is None else comment_heading(body)


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        (
            "# READINESS ONLY — no livenessProbe AND no startupProbe, deliberately.",
            "READINESS ONLY",
        ),
        (
            "    # ROLLBACK ON THE DEGRADED PATH — recorded decision, backend#1922.",
            "ROLLBACK ON THE DEGRADED PATH",
        ),
        ("## STRICTLY NON-MUTATING. Reads the cluster, never writes.", "STRICTLY NON-MUTATING"),
        ("// WHY THIS EXISTS", "WHY THIS EXISTS"),
        ("-- MIGRATION ORDER MATTERS: run after 0042_users.sql", "MIGRATION ORDER MATTERS"),
        ("# HPA V2 ONLY -- the v1 API is gone", "HPA V2 ONLY"),
        ("# NO `helm.sh/hook` ON MIGRATIONS, ever", "NO `helm.sh/hook` ON MIGRATIONS"),
        ("# KEEP   IN    SYNC with values.yaml", "KEEP IN SYNC"),
        ("# === RELEASE GATES ===", "RELEASE GATES"),
        ("#   SINGLE REPLICA—by design", "SINGLE REPLICA"),
    ],
)
def test_comment_headings(line: str, heading: str) -> None:
    assert heading_of(line) == heading


@pytest.mark.parametrize(
    "line",
    [
        "# TODO fix this",
        "# NOTE: x",
        "# IMPORTANT",
        "# IMPORTANT: read this first",
        "# DO IT",  # two words, but too few capitals to be a heading
        "# Readiness only",
        "#!/usr/bin/env bash",
        "# -- The image tag (helm-docs)",
        "replicas: 3  # SINGLE REPLICA ONLY",  # a trailing comment is not a comment line
        "--namespace PROD CLUSTER",  # a command-line flag, not an SQL comment
        "---",
    ],
)
def test_not_headings(line: str) -> None:
    assert heading_of(line) is None


def test_helm_and_html_block_comments() -> None:
    text = "\n".join(
        [
            "{{/*",
            "WHY THIS EXISTS — the chart's service account is shared",
            "  * PAIRED WITH THE TEST in tests/deployment_test.yaml",
            "*/}}",
            "{{- /* READINESS ONLY */ -}}",
            "<!-- KEEP THIS TABLE SORTED -->",
            "<!--",
            "ORDERING MATTERS HERE",
            "-->",
            "# not a comment heading: plain YAML below",
            "kind: Deployment",
        ]
    )
    assert find_headings("templates/_helpers.tpl", text) == (
        Heading("WHY THIS EXISTS", 2),
        Heading("PAIRED WITH THE TEST", 3),
        Heading("READINESS ONLY", 5),
        Heading("KEEP THIS TABLE SORTED", 6),
        Heading("ORDERING MATTERS HERE", 8),
    )


def test_markdown_atx_and_setext_headings_of_any_case() -> None:
    text = "\n".join(
        [
            "# Upgrading   from v1",
            "",
            "Some text.",
            "Rollback notes",
            "==============",
            "",
            "```bash",
            "# SHELL COMMENT HEADING",
            "# plain shell comment",
            "```",
            "- a list item",
            "---",
            "## Known issues ##",
            "<!-- GENERATED SECTION BELOW -->",
        ]
    )
    assert find_headings("docs/UPGRADE.md", text) == (
        Heading("Upgrading from v1", 1),
        Heading("Rollback notes", 4),
        Heading("SHELL COMMENT HEADING", 8),
        Heading("Known issues", 13),
        Heading("GENERATED SECTION BELOW", 14),
    )


def refs(text: str) -> list[Reference]:
    return [r for unit in prose_units(text) for r in references(unit, lambda f: True)]


def local(path: str) -> FileRef:
    return FileRef(path)


@pytest.mark.parametrize(
    ("text", "heading", "file"),
    [
        (
            "the heading ROLLBACK ON THE DEGRADED PATH appears once, in "
            "client/templates/jobs-manager-deployment.yaml, which is the precise file",
            "ROLLBACK ON THE DEGRADED PATH",
            local("client/templates/jobs-manager-deployment.yaml"),
        ),
        ('see "READINESS ONLY" in values.yaml', "READINESS ONLY", local("values.yaml")),
        ("the `READINESS ONLY` note in values.yaml", "READINESS ONLY", local("values.yaml")),
        (
            "assess.sh says STRICTLY NON-MUTATING, and this branch mutates",
            "STRICTLY NON-MUTATING",
            local("assess.sh"),
        ),
        ("WHY THIS EXISTS (templates/sa.yaml)", "WHY THIS EXISTS", local("templates/sa.yaml")),
        ("docs/UPGRADE.md § Upgrading from v1", "Upgrading from v1", local("docs/UPGRADE.md")),
        (
            'the "Known issues" section of README.md',
            "Known issues",
            local("README.md"),
        ),
        (
            "acme/backend:deploy/jobs.yaml § “ROLLBACK ON THE DEGRADED PATH”",
            "ROLLBACK ON THE DEGRADED PATH",
            FileRef("deploy/jobs.yaml", "acme/backend"),
        ),
        (
            "https://github.com/acme/backend/blob/develop/deploy/jobs.yaml says "
            "'ROLLBACK ON THE DEGRADED PATH'",
            "ROLLBACK ON THE DEGRADED PATH",
            FileRef("deploy/jobs.yaml", "acme/backend"),
        ),
    ],
)
def test_reference_phrasings(text: str, heading: str, file: FileRef) -> None:
    [ref] = refs(text)
    assert (ref.text, ref.file) == (heading, file)


def test_quoted_caps_without_a_file_names_none() -> None:
    [ref] = refs('We keep "WHY THIS EXISTS" short.')
    assert (ref.text, ref.file, ref.quoted) == ("WHY THIS EXISTS", None, True)


def test_each_heading_pairs_with_the_file_of_its_own_sentence() -> None:
    first, second = refs(
        "READINESS ONLY lives in templates/api.yaml. The worker follows values.yaml, "
        "see SINGLE REPLICA there."
    )
    assert first.file == local("templates/api.yaml")
    assert second.file == local("values.yaml")


def test_mixed_case_quotes_are_not_references_without_section_words() -> None:
    assert refs('set "replicaCount" in values.yaml') == []
    assert refs("the `values.yaml` file") == []
    assert refs("a line about a heading.\nPR `#107 pr-g` edits `client/values.yaml`") == []


def test_above_and_below_in_a_comment_block() -> None:
    text = "\n".join(
        [
            "# READINESS ONLY — no liveness probe.",
            "readinessProbe: {}",
            "# as READINESS ONLY (above) says, and",
            "# see `PORTS ARE FIXED` (below)",
        ]
    )
    found = [r for u in file_units(FileText("t.yaml", text)) for r in references(u, lambda f: True)]
    assert [(r.text, r.side, r.line) for r in found] == [
        ("READINESS ONLY", "above", 3),
        ("PORTS ARE FIXED", "below", 4),
    ]


def test_a_heading_line_defines_and_does_not_refer() -> None:
    text = "# READINESS ONLY — kept in sync with values.yaml\nreadinessProbe: {}\n"
    assert [
        r for u in file_units(FileText("t.yaml", text)) for r in references(u, lambda f: True)
    ] == []


def test_only_wanted_lines_are_read() -> None:
    text = "# see READINESS ONLY in values.yaml\n# and SINGLE REPLICA in values.yaml\n"
    units = file_units(FileText("notes.sh", "x: 1\n" + text), frozenset({3}))
    found = [r for u in units for r in references(u, lambda f: True, frozenset({3}))]
    assert [(r.text, r.line) for r in found] == [("SINGLE REPLICA", 3)]


def test_one_text_read_as_markdown_and_as_code_keeps_both_readings_apart() -> None:
    """Headings and units are kept per text across reviews; the same text in a `.md` and in a
    `.yaml` file reads differently, whichever is asked first."""
    text = "# Install steps\n\nkey: 1\n# ROLLOUT ORDER FIRST\n"
    assert find_headings("values.yaml", text) == (Heading("ROLLOUT ORDER FIRST", 4),)
    assert find_headings("README.md", text) == (
        Heading("Install steps", 1),
        Heading("ROLLOUT ORDER FIRST", 4),
    )
    assert find_headings("values.yaml", text) == (Heading("ROLLOUT ORDER FIRST", 4),)


def test_the_units_kept_for_a_text_are_filtered_by_each_ask_for_its_lines() -> None:
    text = "a: 1\n# see the README\nb: 2\n"
    assert [u.first_line for u in file_units(FileText("values.yaml", text), frozenset({1}))] == [1]
    assert [u.first_line for u in file_units(FileText("values.yaml", text), frozenset({2}))] == [2]
    assert [u.first_line for u in file_units(FileText("values.yaml", text))] == [2, 1, 3]


def test_lines_that_cannot_open_a_comment_are_none_and_block_comments_still_span() -> None:
    text = "a: 1\n{{/* FIRST LINE\n  still inside */}}\n  <!-- x -->\nb: 2 # trailing\n"
    assert comment_bodies(text) == [None, " FIRST LINE", "  still inside ", "x", None]


_BEFORE_PIECES = ["section", "Section", "SECTION", "ſection", "heading", "HEADING", "§", " ", "\t"]
_BEFORE_PIECES += ["sub", "x", "_", "-", "(", "é", "1", "see the", "sections"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_BEFORE_PIECES), max_size=8))
def test_a_section_named_before_a_quote_is_found_from_the_lines_end_alone(
    pieces: list[str],
) -> None:
    """Whether the words before a quote name a section is read from their end (a dashboard's JSON
    line quotes hundreds of strings), and says what the pattern says of the whole line."""
    before = "".join(pieces)
    assert _section_before(before) == (SECTION_BEFORE_RE.search(before) is not None)


def test_a_dashboards_line_of_quoted_strings_is_one_unit_quoting_no_heading() -> None:
    """A generated dashboard's JSON is one line of thousands of quoted strings (each quote's
    section words are looked for before it alone): `"Panel 7 section"` is a title, no heading."""
    line = (
        '{"panels": [' + ", ".join(f'{{"title": "Panel {n} section"}}' for n in range(3000)) + "]}"
    )
    (unit,) = file_units(FileText("templates/dashboard.yaml", line + "\n"), frozenset({1}))
    assert unit.first_line == 1 and not unit.mentions


@st.composite
def _spans_and_mention(draw: st.DrawFn) -> tuple[list[_FileSpan], _Mention]:
    """Files in order that never overlap, and a mention anywhere: before, after, inside or across."""
    cuts = sorted(draw(st.sets(st.integers(0, 200), max_size=16)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    spans = [_FileSpan(a, b, FileRef(f"f{a}.md")) for a, b in pairs if a < b]
    start = draw(st.integers(0, 200))
    end = draw(st.integers(start + 1, 210))
    return spans, _Mention(start, end, "X Y", True, False, None)


@settings(max_examples=2000, deadline=None)
@given(_spans_and_mention())
def test_the_nearest_file_is_the_least_gap_as_before(
    case: tuple[list[_FileSpan], _Mention],
) -> None:
    """The nearest file, found by bisection, is the one the plain rule picks: the least gap, the
    file after on a tie, a file inside or across the mention counted after it."""
    spans, mention = case

    def gap(f: _FileSpan) -> tuple[int, bool]:
        before = f.end <= mention.start
        return (mention.start - f.end if before else f.start - mention.end, before)

    assert _Spans(spans).nearest(mention) == (min(spans, key=gap) if spans else None)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet="ab .", max_size=40),
    st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45)), max_size=6),
)
def test_blanking_spans_at_once_is_blanking_them_one_by_one(
    text: str, spans: list[tuple[int, int]]
) -> None:
    one_by_one = text
    for start, end in spans:
        if start < end:
            one_by_one = blank(one_by_one, start, min(end, len(text)))
    ordered = [(a, min(b, len(text))) for a, b in spans if a < b]
    assert blank_all(text, ordered) == one_by_one


def test_a_sentence_is_counted_by_the_ends_before_it() -> None:
    unit = parse_unit(["One. Two “A B CD EF” here. Three! Four"], 1)
    assert [unit.sentence_of(n) for n in (0, 4, 5, 30, len(unit.text))] == [0, 1, 1, 2, 3]
    assert all(
        unit.sentence_of(n) == sum(end < n for end in unit.sentence_ends)
        for n in range(len(unit.text) + 1)
    )


_AROUND = ["section", "Section", "heading", "ſection", "§", " ", "\t", "\n", "x", "sub", "s", "é"]


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(st.sampled_from(_AROUND), max_size=30),
    st.lists(st.sampled_from(_AROUND), max_size=30),
    st.integers(0, 90),
)
def test_a_quotes_section_words_are_read_from_its_line_as_the_whole_line_reads(
    before: list[str], after: list[str], pad: int
) -> None:
    """The words around a quote are read from a window of its line (a megabyte line quotes
    thousands of strings); they say what the patterns say of the whole line."""
    text = "".join(before) + " " * pad + '"Upgrade notes"' + " " * (pad % 7) + "".join(after)
    start = text.index('"Upgrade notes"')
    end = start + len('"Upgrade notes"')
    line_start = text.rfind("\n", 0, start) + 1
    line_end = len(text) if (n := text.find("\n", end)) < 0 else n
    whole = bool(
        SECTION_BEFORE_RE.search(text, line_start, start)
        or SECTION_AFTER_RE.match(text[end:line_end])
    )
    assert (_section_title(text, start, end, "Upgrade notes") is not None) == whole


def test_a_crafted_line_of_thousands_of_references_is_read_in_one_pass() -> None:
    """A values file may be a megabyte line that quotes and names files thousands of times (PR
    content is untrusted): each quote pairs with its own sentence's file. Read span by span and
    file by file, this line took hours; it is read in about a second."""
    n = 20_000
    line = "# " + "“ALPHA BETA GAMMA” (a.yaml). " * n
    (unit,) = file_units(FileText("values.yaml", line + "\n"), frozenset({1}))
    found = references(unit, lambda f: True)
    # The first quote opens the comment: it is the heading the comment defines, not a reference.
    assert len(found) == n - 1
    assert {(r.file, r.explicit, r.line) for r in found} == {(FileRef("a.yaml"), True, 1)}


# Pieces of units: quotes of each kind, a section sign, capitals bare or not, files, sentence ends.
_UNIT_PIECES = [
    *('"', "“", "”", "`", "'", "§", " ", ". ", "\n", "- "),
    *(
        "UPGRADE NOTES",
        "SEE",
        "ABCD EFGH",
        "ALL CAPS HEADING",
        "Install",
        "section",
        "(above)",
        "it's",
    ),
    *("values.yaml", "docs/a.md", "acme/charts:README.md", "1.2.3", "x"),
]


@settings(max_examples=1500, deadline=None, database=None, print_blob=True)
@given(
    st.lists(
        st.lists(st.sampled_from(_UNIT_PIECES), max_size=12).map("".join), min_size=1, max_size=3
    ),
    st.booleans(),
)
def test_a_unit_that_can_hold_no_mention_is_not_read_for_files(
    lines: list[str], bare: bool
) -> None:
    """A unit with no quote, `§` or bare capitals is not read for the files it names (most lines of
    code): its references are what reading it whole finds, none."""
    unit = parse_unit(lines, 1, bare)
    read = []
    found = references(unit, lambda f: read.append(f) is None, frozenset({1, 2, 3}))
    if not unit.mentions:
        assert not found and not read
    assert found == references(_whole_unit(lines, bare), lambda f: True, frozenset({1, 2, 3}))


def _whole_unit(lines: list[str], bare: bool) -> Unit:
    """parse_unit reading every unit whole, as it did before it looked for marks first."""
    real = refs_module._may_mention
    refs_module._may_mention = lambda text, bare: True
    try:
        return refs_module._parse_unit(tuple(lines), 1, bare)  # not the units remembered
    finally:
        refs_module._may_mention = real


def test_a_unit_read_again_is_the_one_read_before() -> None:
    # A README's paragraphs are read by every review that removes a heading it may quote.
    lines = ["See “UPGRADE NOTES” in README.md", "before upgrading."]
    unit = parse_unit(lines, 3)
    assert parse_unit(list(lines), 3) is unit  # equal lines in another list: found by value
    assert [m.text for m in unit.mentions] == ["UPGRADE NOTES"]
    moved = parse_unit(lines, 7)
    assert moved is not unit and moved.line_of(moved.mentions[0].start) == 7
    assert unit.line_of(unit.text.index("before")) == 4
    code = parse_unit(lines, 3, bare=False)
    assert code is not unit and code.mentions[0].loose


HELM_DOCS = """# grafana

Settings, as `helm-docs` writes them; see “UPGRADE NOTES” in UPGRADE.md first.

| Key | Type | Default | Description |
|-----|------|---------|-------------|
| strategy.type | string | `"Recreate"` | How pods go: “ROLLING UPDATE MODE” |
| image.repository | string | `"grafana/grafana"` | Pinned in values.yaml |
| sidecar.enabled | bool | `false` | See “SIDECAR SETUP STEPS” in docs/SIDECAR.md |
Trailing row | with | no | leading pipe
"""


def test_a_markdown_table_is_read_row_by_row() -> None:
    # A quote in one row is not paired with the file another row names (read as one paragraph,
    # “ROLLING UPDATE MODE” went to the next row's values.yaml); within a row it is, and the
    # paragraph above the table is read as before.
    units = file_units(FileText("README.md", HELM_DOCS))
    assert [u.first_line for u in units] == [3, 5, 6, 7, 8, 9, 10]

    def keep(file: FileRef) -> bool:  # the files the tree holds
        return file.path in ("UPGRADE.md", "values.yaml", "docs/SIDECAR.md")

    found = [
        (r.text, r.file.path if r.file else None, r.line)
        for u in units
        for r in references(u, keep)
    ]
    assert ("UPGRADE NOTES", "UPGRADE.md", 3) in found
    assert ("SIDECAR SETUP STEPS", "docs/SIDECAR.md", 9) in found
    assert ("ROLLING UPDATE MODE", None, 7) in found  # its row names no file
    whole = refs_module._parse_unit(tuple(HELM_DOCS.splitlines()[4:]), 5, True)
    as_one = [(r.text, r.file.path) for r in references(whole, keep) if r.file]
    assert ("ROLLING UPDATE MODE", "values.yaml") in as_one  # what the row cut prevents
    # Without a delimiter row under it, a line of pipes is prose, not a table.
    [prose] = file_units(FileText("README.md", "a | b\nsee “X Y” | in README.md\n"))
    assert prose.first_line == 1 and prose.text.count("\n") == 1


MARKDOWN_LINES = [
    *("# Title", "   ## Deep title ##", "    # code, not a heading", "#", "#hash", "\t# tab"),
    *("Setext title", "===", "---", "  ----  ", "- item", "= x", "text", "", "  text"),
    *("```", "  ~~~", "    ```", "```yaml", "`` not a fence", "a\rb", "x\u2028y"),
]


# ATX headings as a pattern reads them, the reference atx_text is held to (the pattern itself tried
# the closing `#`s at every character of a title, each try reading a run of spaces on: quadratic).
_REFERENCE_ATX_RE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


@settings(max_examples=3000, deadline=None, database=None, print_blob=True)
@given(st.text(alphabet=" \t#ab\x0b\x0c\r\u2028", max_size=14))
def test_an_atx_heading_is_read_as_the_pattern_reads_it(line: str) -> None:
    match = _REFERENCE_ATX_RE.match(line)
    assert atx_text(line) == (None if match is None else match.group(1) or "")


def _reference_fenced(lines: list[str]) -> frozenset[int]:
    """Fenced lines read line by line: each fence toggles, the lines between are inside."""
    fenced, inside = set(), False
    for index, line in enumerate(lines):
        if re.match(r"^ {0,3}(?:```|~~~)", line):
            inside = not inside
            fenced.add(index)
        elif inside:
            fenced.add(index)
    return frozenset(fenced)


@settings(max_examples=600, deadline=None, database=None, print_blob=True)
@given(st.lists(st.sampled_from(MARKDOWN_LINES), max_size=30), st.sampled_from(["", "\n"]))
def test_fences_and_headings_found_by_search_are_those_read_line_by_line(
    lines: list[str], end: str
) -> None:
    text = "\n".join(lines) + end
    split = git_lines(text)
    fenced = _reference_fenced(split)
    assert fenced_lines(split) == fenced
    expected = {}
    for index, line in enumerate(split):
        if index in fenced:
            continue
        if (match := _REFERENCE_ATX_RE.match(line)) and match.group(1):
            expected[index + 1] = match.group(1).strip()
        elif index > 0 and SETEXT_RE.match(line) and _setext_text(split[index - 1]):
            expected[index] = split[index - 1].strip()
    assert markdown_heading_lines(text) == expected
