"""A file's text and what is read of it whole, each read once per review. A review reads a changed
file for its references, its links and the headings it removes; every whole pass over a CRD of
800 KB (its lines, a scan for block comments) costs a millisecond or two, and an operator's release
changes a dozen such files on each side."""

from __future__ import annotations

from functools import cached_property

from checks.headings.text import is_markdown, lines_stand_alone, odd_breaks


class FileText:
    """The text of the file at `path`. Values computed on the first ask; the text never changes."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text

    @cached_property
    def markdown(self) -> bool:
        return is_markdown(self.path)

    @cached_property
    def lines(self) -> tuple[str, ...]:
        """As str.splitlines cuts them."""
        return tuple(self.text.splitlines())

    @cached_property
    def odd_breaks(self) -> bool:
        """Lines broken at something other than `\\n` (text.odd_breaks)."""
        return odd_breaks(self.text)

    @cached_property
    def stands_alone(self) -> bool:
        """Each line's comment is the line's own business (text.lines_stand_alone)."""
        return not self.odd_breaks and lines_stand_alone(self.text, self.markdown)
