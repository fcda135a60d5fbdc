"""GitHub's closing keywords: which issues a PR says it closes ("Fixes #12", "closes acme/app#3",
"Resolves: https://github.com/acme/app/issues/7").

GitHub's rule, as its docs give it: one of nine keywords, case-insensitive, an optional colon, then
one issue reference: `#N` (this repository), `owner/name#N`, or the issue's URL. "see #12" and
"related to #12" link the issue without closing it, so they are not read. A keyword followed by
several references closes only the first ("closes #1, #2" closes #1). Text in fenced code blocks,
inline code and HTML comments is not linked by GitHub, and PR templates keep their examples there."""

from __future__ import annotations

import re
from typing import NamedTuple

from bot.codespans import blank_code_spans
from bot.textlines import git_lines

THIS_REPO = ""  # what `#N` names when the repository's own name is not known

KEYWORDS = ("close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved")
_NAME = r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+"
_CLOSING = re.compile(
    rf"(?<![\w/#-])(?:{'|'.join(KEYWORDS)}):?\s+"
    rf"(?:https?://github\.com/(?P<url_repo>{_NAME})/issues/(?P<url_number>\d+)"
    rf"|(?P<repo>{_NAME})?#(?P<number>\d+))(?![\w/-])",
    re.IGNORECASE,
)
# Lines opening or closing a fence: three or more backticks or tildes, indented at most 3 spaces.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


class IssueRef(NamedTuple):
    """An issue, normalised: its repository as `owner/name` in lower case (THIS_REPO for `#N`
    when the repository's name is not known), and its number."""

    repo: str
    number: int

    def shown(self) -> str:
        return f"#{self.number}" if self.repo == THIS_REPO else f"{self.repo}#{self.number}"


def closing_issues(text: str, this_repo: str = THIS_REPO) -> frozenset[IssueRef]:
    """The issues `text` (a PR's title or body, a commit message) says it closes."""
    here = this_repo.lower()
    found = set()
    for match in _CLOSING.finditer(linked_text(text)):
        repo = match["url_repo"] or match["repo"]
        number = match["url_number"] or match["number"]
        ref = IssueRef(repo.lower() if repo else here, int(number))
        found.add(IssueRef(THIS_REPO, ref.number) if here and ref.repo == here else ref)
    return frozenset(found)


def linked_text(text: str) -> str:
    """`text` without what GitHub does not link: HTML comments, fenced blocks and inline code."""
    text = _HTML_COMMENT.sub(" ", text)
    kept: list[str] = []
    fence: str | None = None
    for line in git_lines(text):
        opened = _FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
        else:
            kept.append(line)
    return blank_code_spans("\n".join(kept))
