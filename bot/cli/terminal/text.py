"""PR-derived text as rich `Text`, safe to print on a terminal, and the styles of our own words.

Chart, file and profile names, Helm's messages and the findings built from them come from the PR's
author. rich strips only a few control codes (BEL, BS, VT, FF, CR), not ESC: an escape sequence in a
file name could clear the screen, move the cursor over our verdict or retitle the window. Every PR
string goes through `show_hidden` (the markdown's rule: controls and bidi characters shown as
`\\u001b`) into a `Text`, which rich never parses for markup (`[bold]`) or emoji codes."""

from __future__ import annotations

import re

from rich.console import Console
from rich.text import Text

from bot.model.markdown_safe import show_hidden
from bot.model.report import Severity

SEVERITY_STYLE = {Severity.FAILURE: "bold red", Severity.WARNING: "yellow", Severity.NOTICE: "blue"}
# The verdict's icon (bot/report/markdown.py) → its colour.
VERDICT_STYLE = {"❌": "bold red", "⚠️": "bold yellow", "✅": "bold green"}
HEADING = "bold underline"
DIM = "dim"
CODE = "cyan"
# A code span of a message (`probes.forbid`): one backtick each side, on one line.
CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")


def plain(text: str, style: str = "") -> Text:
    return Text(show_hidden(text), style=style)


def prose(text: str, style: str = "") -> Text:
    """A finding's message: its code spans shown as code, without their backticks."""
    out = Text(style=style)
    at = 0
    for m in CODE_SPAN_RE.finditer(text):
        out.append(show_hidden(text[at : m.start()]))
        out.append(show_hidden(m.group(1)), style=CODE)
        at = m.end()
    out.append(show_hidden(text[at:]))
    return out


def open_console() -> Console:
    """stdout as rich sees it: its width, colours and NO_COLOR. No markup, emoji codes or
    highlighting, so that nothing in a string is read as anything but text."""
    return Console(markup=False, emoji=False, highlight=False)
