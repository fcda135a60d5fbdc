"""PR-derived text made safe to print in GitHub markdown: one function per place it is printed.

File, chart, profile, container and branch names, Helm's error messages and the messages built
from them come from the PR's author. Printed raw, `@alice` notifies alice, `<img src=…>` and
`![x](…)` fetch a tracking image, `## ✅ chart-review: no findings` forges our verdict and U+202E
reverses what follows. Each function below takes such text and returns markdown that shows it
literally; our own words (icons, headings, the summary marker) never pass through here. Ordinary
text — no `@name`, `<`, `](`, entity, control or bidi character — comes back unchanged, so that
messages keep their own `code spans`.

    prose(text)      running text, possibly several lines (a finding's message as a paragraph)
    inline(text)     running text inside one line of ours (a heading, a bullet, **bold**)
    cell(text)       running text inside a table cell
    code(text)       an inline code span
    cell_code(text)  an inline code span inside a table cell
"""

from __future__ import annotations

import re
import string

from bot.codespans import BacktickRuns

# Shown as `\u202e`: C0/C1 controls (not tab or newline), the line and paragraph separators, and the
# bidi embeddings, overrides, isolates and marks that reorder the text around them on screen.
_HIDDEN_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_ZWJ = "\u200d"  # after `@`: GitHub links and notifies `@name` only when a name follows at once
_PUNCT = frozenset(string.punctuation)  # what a backslash escapes in CommonMark
# GitHub decodes entities before it looks for mentions, so `&#64;alice` would notify alice.
_ENTITY_RE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_ALNUM = frozenset(string.ascii_letters + string.digits)
# Block syntax a line of PR text could start: an ATX heading (`## ✅ chart-review: …`), a setext
# underline (`===`, `---`) or table delimiter row (`|---|`), a `~~~` fence that would swallow all
# that follows; also behind indentation, `>` or a list marker, where it still renders (a heading in
# a quote or a list item). A backslash before its first character makes each plain text.
# The containers are read one by one and each place after them tried, the longest first: a pattern
# with a lookahead reading to the line's end from each of them was quadratic (`- - - … x`).
_ORDERED_ITEM_RE = re.compile(r"\d{1,9}[.)](?=[ \t])")
_ATX_START_RE = re.compile(r"#{1,6}(?:[ \t]|$)")
_UNDERLINE = frozenset("-=|:")  # a setext underline or table delimiter row: these, spaces, tabs
_UNDERLINE_TAIL = frozenset("-=|: \t")
# GitHub Actions reads a line of a step's output as a workflow command when it starts with `::`
# after its leading spaces (`::warning::…` makes an annotation, `::stop-commands::` mutes the rest),
# or holds `##[` anywhere (the runner's older form). A zero-width space, which renders as nothing
# and is no space to the runner, goes before each.
_ZWSP = "\u200b"
_LEGACY_COMMAND = "##["


def show_hidden(text: str) -> str:
    """Hidden and reordering characters as `\\u202e`, the rest as it is: what a fence holds, and
    what the terminal prints (an escape sequence from the PR could clear the screen or forge our
    verdict there)."""
    return _HIDDEN_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _run_end(text: str, start: int) -> int:
    end = start
    while end < len(text) and text[end] == "`":
        end += 1
    return end


def _char(text: str, i: int) -> str:
    """One character outside code spans, neutralised."""
    ch = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch == "<":  # raw HTML (`<img>`, `<details>`), autolinks and HTML comments
        return "&lt;"
    if ch == "&" and _ENTITY_RE.match(text, i):
        return "&amp;"
    if ch == "]" and nxt in ("(", "[", ":"):  # `[x](y)`, `![x](y)`, `[x][ref]`, `[ref]: url`
        return "\\]"
    if ch == "@" and nxt in _ALNUM and (i == 0 or text[i - 1] not in _ALNUM):
        return "@" + _ZWJ  # `name@host` (an email, a digest) is no mention and stays as it is
    return ch


def _neutral_line(text: str) -> str:
    """One line: code spans kept (nothing in them renders but hidden characters, already shown),
    the rest neutralised. A backtick run with no partner on the line is escaped, so that GitHub
    cannot pair it with one on another line and take our neutralised text for code or the reverse."""
    out = []
    runs = BacktickRuns(text)  # a partner found by its length, not by reading every run after
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCT:
            out.append(text[i : i + 2])  # already literal; `\@name` still needs breaking
            if text[i + 1] == "@" and i + 2 < len(text) and text[i + 2] in _ALNUM:
                out.append(_ZWJ)
            i += 2
        elif ch == "`":
            end = _run_end(text, i)
            close = runs.closing(end, end - i)
            if close is None:
                out.append("\\`" * (end - i))
                i = end
            else:
                out.append(text[i : close + end - i])
                i = close + end - i
        else:
            out.append(_char(text, i))
            i += 1
    return "".join(out)


def _block_safe(text: str) -> str:
    """A line with a backslash before the block syntax it would start, behind its containers."""
    at = _block_start(text)
    return text if at is None else f"{text[:at]}\\{text[at:]}"


def _block_start(text: str) -> int | None:
    """Where, after the longest run of containers (spaces, `>`, list markers) that is followed by
    one, the line starts an ATX heading, a setext underline or delimiter row, or a `~~~` fence."""
    places = [0]
    at = 0
    while at < len(text):
        ch = text[at]
        if ch in " \t>" or (ch in "-*+" and text[at + 1 : at + 2] in (" ", "\t")):
            at += 1
        elif (item := _ORDERED_ITEM_RE.match(text, at)) is not None:
            at = item.end()
        else:
            break
        places.append(at)
    tail = len(text)  # where the line's last run of underline characters starts
    while tail > 0 and text[tail - 1] in _UNDERLINE_TAIL:
        tail -= 1
    for at in reversed(places):
        underline = at >= tail and at < len(text) and text[at] in _UNDERLINE
        if underline or _ATX_START_RE.match(text, at) or text.startswith("~~~", at):
            return at
    return None


def no_workflow_command(line: str) -> str:
    """One line of output that the GitHub Actions runner reads as text, not as a command."""
    if _LEGACY_COMMAND in line:
        line = line.replace(_LEGACY_COMMAND, "##" + _ZWSP + "[")
    stripped = line.lstrip()
    if stripped.startswith("::"):
        at = len(line) - len(stripped)
        line = line[:at] + _ZWSP + line[at:]
    return line


def prose(text: str) -> str:
    """PR text as running markdown; its line breaks stay, but no line can start a block of its own
    or be read as a workflow command."""
    lines = show_hidden(text).split("\n")
    return "\n".join(no_workflow_command(_neutral_line(_block_safe(x))) for x in lines)


def inline(text: str) -> str:
    """PR text inside one line of ours: a line break would end our heading or bullet."""
    return prose(text.replace("\n", " "))


def cell(text: str) -> str:
    """PR text in a table cell: a `|` would end the cell early (GFM unescapes `\\|` before it parses
    the cell's markdown, so code spans and escapes inside read as they would outside a table)."""
    return inline(text).replace("|", "\\|")


def code(text: str) -> str:
    """PR text as an inline code span, whatever backticks it holds: the fence is one backtick longer
    than its longest run, padded with a space where CommonMark would take one off or would read a
    backtick of the text as part of the fence. Line breaks are shown, as a span cannot hold them."""
    if not text:
        return ""
    text = show_hidden(text).replace("\n", "\\u000a")
    longest = max((len(m) for m in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = text[0] == "`" or text[-1] == "`" or (text[0] == text[-1] == " " and text.strip() != "")
    return f"{fence} {text} {fence}" if pad else f"{fence}{text}{fence}"


def one_line(text: str) -> str:
    """A name on one line of plain text (not markdown): hidden characters and line breaks shown as
    `\\uXXXX`, so that the name cannot end the line or start a workflow command."""
    return no_workflow_command(show_hidden(text).replace("\n", "\\u000a"))


def cell_code(text: str) -> str:
    """PR text as an inline code span in a table cell (see `cell` for the `|`)."""
    return code(text).replace("|", "\\|")
