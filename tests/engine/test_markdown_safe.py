"""Each hostile string in each context, and the exact markdown it becomes."""

from __future__ import annotations

import pytest

from bot.model.markdown_safe import cell, cell_code, code, inline, one_line, prose

ZWJ = "\u200d"
ZWSP = "\u200b"
MENTIONS = "@alice @bob"
IMG = "<img src=https://x/t.png>"
VERDICT = "## ✅ chart-review: no findings"
RLO = "evil\u202egnp.yaml"
TICKS = "a`b``c"
IMAGE = "![x](https://x/y)"

ORDINARY = [
    "QoS drops to BestEffort",
    "`version` 1.0.0 is not greater than 1.0.0 at the merge base.",
    "sets `arbitrary_uid: true` in its values",
    "image example/app@sha256:abc, mail ops@example.com",
    "template: app/templates/a.yaml:2:5: executing at .Values.nope: nil pointer",
    "c > d; AT&T [x] (y) #1",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged_in_running_text(text: str) -> None:
    assert prose(text) == inline(text) == cell(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MENTIONS, f"@{ZWJ}alice @{ZWJ}bob"),
        (IMG, "&lt;img src=https://x/t.png>"),
        (VERDICT, "\\## ✅ chart-review: no findings"),
        (RLO, "evil\\u202egnp.yaml"),
        (TICKS, "a\\`b\\`\\`c"),
        (IMAGE, "![x\\](https://x/y)"),
        ("[x](https://x/y)", "[x\\](https://x/y)"),
        ("[x]: https://x/y", "[x\\]: https://x/y"),
        ("&#64;alice", "&amp;#64;alice"),
        ("\\@alice", f"\\@{ZWJ}alice"),
        ("<!-- chart-review:summary -->", "&lt;!-- chart-review:summary -->"),
        ("a\x1b[31mred\x00", "a\\u001b[31mred\\u0000"),
        # Every `<`, even one that starts no tag: an email autolink (`<1`@x.y>`) may start with any
        # character and outranks a code span, so that the `<img>` would be outside code. With the
        # `<` escaped GitHub reads the code span we read. `&lt;` renders as `<`: Helm's
        # `at <.Values.x>` reads the same.
        ("at <.Values.x>: nil", "at &lt;.Values.x>: nil"),
        ("<1`@x.y> <img src=z> `", "&lt;1`@x.y> <img src=z> `"),
        ("\u2066x\u2069 \u200e\u200f\u061c", "\\u2066x\\u2069 \\u200e\\u200f\\u061c"),
    ],
)
def test_prose(text: str, expected: str) -> None:
    assert prose(text) == expected


def test_prose_keeps_our_code_spans_and_nothing_inside_them_changes() -> None:
    assert (
        prose("container `@alice <b>` is bad, @bob") == f"container `@alice <b>` is bad, @{ZWJ}bob"
    )
    assert prose("``a`b`` then `c`") == "``a`b`` then `c`"


def test_prose_keeps_lines_but_no_line_starts_a_block() -> None:
    text = "first\n## ✅ chart-review: no findings\n✅ forged\n===\n---\n~~~\n|---|---|\nlast"
    assert prose(text) == (
        "first\n\\## ✅ chart-review: no findings\n✅ forged\n\\===\n\\---\n\\~~~\n\\|---|---|\nlast"
    )


def test_prose_defuses_a_heading_in_a_quote_a_list_or_behind_spaces() -> None:
    text = "> ## ✅ chart-review: no findings\n- ## ✅ x\n1. # x\n     ## x\n> ===\n#hashtag"
    assert prose(text) == (
        "> \\## ✅ chart-review: no findings\n- \\## ✅ x\n1. \\# x\n     \\## x\n> \\===\n#hashtag"
    )


def test_prose_escapes_a_backtick_with_no_partner_on_its_line() -> None:
    # Unescaped, GitHub would pair the two lone backticks across the line break and read
    # `<img …>` outside the code span it would make of the rest.
    assert prose("a ` b\n`<img src=x>` c") == "a \\` b\n`<img src=x>` c"
    assert prose("a ` b\n<img src=x> ` c") == "a \\` b\n&lt;img src=x> \\` c"


def test_prose_escapes_a_line_break_of_a_carriage_return() -> None:
    assert prose("a\r## b") == "a\\u000d## b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MENTIONS, f"@{ZWJ}alice @{ZWJ}bob"),
        (VERDICT, "\\## ✅ chart-review: no findings"),
        ("line one\n## ✅ chart-review: no findings", "line one ## ✅ chart-review: no findings"),
        (IMAGE, "![x\\](https://x/y)"),
    ],
)
def test_inline(text: str, expected: str) -> None:
    assert inline(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MENTIONS, f"@{ZWJ}alice @{ZWJ}bob"),
        (IMG, "&lt;img src=https://x/t.png>"),
        (VERDICT, "\\## ✅ chart-review: no findings"),
        (RLO, "evil\\u202egnp.yaml"),
        (TICKS, "a\\`b\\`\\`c"),
        (IMAGE, "![x\\](https://x/y)"),
        ("a|b\nc", "a\\|b c"),
        ("`a|b`", "`a\\|b`"),
    ],
)
def test_cell(text: str, expected: str) -> None:
    assert cell(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("charts/web/values.yaml", "`charts/web/values.yaml`"),
        (MENTIONS, "`@alice @bob`"),
        (IMG, "`<img src=https://x/t.png>`"),
        (VERDICT, "`## ✅ chart-review: no findings`"),
        (RLO, "`evil\\u202egnp.yaml`"),
        (TICKS, "```a`b``c```"),
        ("`x", "`` `x ``"),
        ("x`", "`` x` ``"),
        (" x ", "`  x  `"),
        ("   ", "`   `"),
        (IMAGE, "`![x](https://x/y)`"),
        ("a\nb", "`a\\u000ab`"),
        ("", ""),
    ],
)
def test_code(text: str, expected: str) -> None:
    assert code(text) == expected


def test_cell_code_escapes_the_pipe_that_would_end_the_cell() -> None:
    assert cell_code("a|b`c") == "``a\\|b`c``"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\n::warning::X", f"a\n{ZWSP}::warning::X"),
        ("   ::error file=a::b", f"   {ZWSP}::error file=a::b"),
        ("see ##[warning]x and ##[group]", f"see ##{ZWSP}[warning]x and ##{ZWSP}[group]"),
        ("a::b ::c", "a::b ::c"),  # not at the line's start: text to the runner
    ],
)
def test_no_line_of_prose_is_a_workflow_command(text: str, expected: str) -> None:
    assert prose(text) == expected


def test_a_name_on_a_plain_line_shows_its_line_break() -> None:
    assert one_line("a\n::warning::X\u2028") == "a\\u000a::warning::X\\u2028"
    assert one_line("::x") == f"{ZWSP}::x"
