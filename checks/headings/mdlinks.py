"""Links to an anchor: `[text](docs/x.md#some-heading)`, `[t](#local)`, a reference definition,
a bare `README.md#configuration`, a GitHub blob URL with `#anchor`. Pure text in, values out; what a
link leads to is resolved elsewhere."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from bot.codespans import blank_code_spans
from checks.headings.inline_links import blank_links, inline_links
from checks.headings.text import MARKDOWN_SUFFIXES, fenced_lines, is_markdown

REFERENCE_DEF_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
# CommonMark's autolink holds no `<`: a `<` is never read past, whatever follows it.
AUTOLINK_RE = re.compile(r"<(https?://[^<>\s]+)>")
# A blob URL, its query and `#anchor` optional: a URL without an anchor is read to the end of its
# path and query once, where a pattern requiring the anchor was tried again at every URL inside them
# (quadratic).
BLOB_URL_RE = re.compile(
    r"https://github\.com/([A-Za-z0-9-]+/[\w.-]+)/blob/([^/\s#?]+)/([^\s#?)\]>\"'`]++)"
    r"(?:\?[^\s#)\]>\"'`]*+)?(?:#([^\s)\]>\"'`]++))?"
)
_MD = "|".join(re.escape(s[1:]) for s in MARKDOWN_SUFFIXES)
BARE_RE = re.compile(
    rf"(?<![\w./:@#(\[<-])((?:[\w.-]+/)*[\w.-]+\.(?:{_MD}))#([\w%-][\w%.-]*)", re.IGNORECASE
)
# GitHub's line anchors (`#L12`, `#L12-L20`) point at source lines, not at headings.
LINE_ANCHOR_RE = re.compile(r"^L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:|^//")


@dataclass(frozen=True)
class AnchorLink:
    line: int | None  # where it was read (None in PR text)
    written: str  # as written: `docs/x.md#a`, `#a`, the URL
    path: str  # the target file: a repository path, or as written for a bare mention
    anchor: str  # percent-decoded, without `#`
    repo: str | None = None  # `owner/name` of a blob URL
    ref: str | None = None  # the blob URL's branch, tag or commit
    bare: bool = False  # a bare `x.md#a` mention: the path may be a basename


def anchor_links(
    path: str | None, lines: Sequence[str], wanted: frozenset[int] | None = None
) -> list[AnchorLink]:
    """The anchor links of a file (`path`) or of PR text (`path` None: only blob URLs lead anywhere
    there), given as its lines (bot/textlines.py's git_lines), on the `wanted` lines when given. Fenced code and
    code spans are examples, not links."""
    skip = fenced_lines(lines) if path is None or is_markdown(path) else frozenset()
    numbers = range(1, len(lines) + 1) if wanted is None else sorted(wanted)
    found: list[AnchorLink] = []
    for number in numbers:
        if not 0 < number <= len(lines) or number - 1 in skip or "#" not in lines[number - 1]:
            continue
        line = blank_code_spans(lines[number - 1])
        found += _line_links(path, line, number if path else None)
    return found


def _line_links(path: str | None, line: str, number: int | None) -> list[AnchorLink]:
    found: list[AnchorLink] = []
    for m in BLOB_URL_RE.finditer(line):
        if m.group(4) is None:
            continue
        anchor = unquote(m.group(4))
        if not LINE_ANCHOR_RE.match(anchor) and m.group(3).lower().endswith(MARKDOWN_SUFFIXES):
            found.append(
                AnchorLink(number, m.group(), unquote(m.group(3)), anchor, m.group(1), m.group(2))
            )
    if path is None:
        return found
    line = BLOB_URL_RE.sub(lambda m: m.group() if m.group(4) is None else " ", line)
    markdown = is_markdown(path)
    links = inline_links(line)
    dests = [link.destination for link in links] if markdown else []
    dests += [m.group(1) for m in REFERENCE_DEF_RE.finditer(line)] if markdown else []
    for dest in dests:
        link = _relative(path, dest, number)
        if link is not None:
            found.append(link)
    rest = AUTOLINK_RE.sub(" ", line)
    rest = blank_links(rest, links if rest == line else inline_links(rest))
    rest = REFERENCE_DEF_RE.sub(" ", rest) if markdown else rest
    for m in BARE_RE.finditer(rest):
        anchor = unquote(m.group(2)).rstrip(".")
        found.append(AnchorLink(number, f"{m.group(1)}#{anchor}", m.group(1), anchor, bare=True))
    return found


def _relative(path: str, dest: str, number: int | None) -> AnchorLink | None:
    """A link destination inside this repository, as GitHub resolves it: against the linking
    file's directory, or the repository root for `/docs/x.md`."""
    if "#" not in dest or SCHEME_RE.match(dest):
        return None
    target, _, anchor = dest.partition("#")
    target = unquote(target.split("?", 1)[0])
    anchor = unquote(anchor)
    if not anchor or "#" in anchor or LINE_ANCHOR_RE.match(anchor):
        return None
    if not target:
        return AnchorLink(number, dest, path, anchor)
    if not target.lower().endswith(MARKDOWN_SUFFIXES):
        return None
    joined = (
        target.lstrip("/")
        if target.startswith("/")
        else posixpath.join(posixpath.dirname(path), target)
    )
    resolved = posixpath.normpath(joined)
    if resolved.startswith("../") or resolved == "..":
        return None  # leaves the repository: nothing here to check it against
    return AnchorLink(number, dest, resolved, anchor)
