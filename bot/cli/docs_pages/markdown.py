"""The little Markdown the generated pages are made of: tables whose cells cannot break them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def cell(text: str) -> str:
    """Text for one table cell: on one line, its pipes escaped (GitHub ends a cell at a bare `|`,
    inside code spans too)."""
    return " ".join(text.split()).replace("|", "\\|")


def plain(text: str) -> str:
    """Plain text (a parser's help) as Markdown that shows it as written: the characters that
    would start emphasis, a tag or an escape are escaped; backticks are kept as the code spans
    the help meant."""
    for char in "\\*<[]":
        text = text.replace(char, "\\" + char)
    return text


def code(text: str) -> str:
    return f"`{text}`"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = [_row(header), _row(["---"] * len(header))]
    lines += [_row([cell(c) for c in row]) for row in rows]
    return "\n".join(lines) + "\n"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
