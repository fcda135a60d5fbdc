"""What the headings check says: each rule's severity, title and message, one place for the
words, and the one way a finding is built."""

from __future__ import annotations

from typing import Any

from bot.model.report import Finding, Severity

CHECK_NAME = "headings"
SEVERITY = {
    "missing": Severity.FAILURE,
    "duplicated": Severity.FAILURE,
    "ambiguous": Severity.WARNING,
    "merge-order": Severity.WARNING,
    "unverifiable": Severity.NOTICE,
    "removed-still-quoted": Severity.FAILURE,
    "reworded-explained": Severity.NOTICE,
    "paired-half": Severity.WARNING,
    "loose-reference": Severity.NOTICE,
    "removed-loosely-quoted": Severity.NOTICE,
    "anchor-missing": Severity.FAILURE,
    "anchor-merge-order": Severity.WARNING,
    "anchor-removed-still-linked": Severity.FAILURE,
}
TITLES = {
    "missing": "Quoted heading not found",
    "duplicated": "Quoted heading appears more than once",
    "ambiguous": "Quoted file name is ambiguous",
    "merge-order": "Quoted heading exists only in another open PR",
    "unverifiable": "Quoted heading could not be verified",
    "removed-still-quoted": "Removed heading is still quoted",
    "reworded-explained": "Heading reworded; the PR text quotes the old wording",
    "paired-half": "Half of a paired heading changed",
    "loose-reference": "Possible heading reference does not resolve",
    "removed-loosely-quoted": "Removed heading may still be mentioned",
    "anchor-missing": "Link to a missing anchor",
    "anchor-merge-order": "Linked anchor exists only in another open PR",
    "anchor-removed-still-linked": "Removed heading's anchor is still linked",
}
QUOTE = "{where} quotes “{text}” in {file}"
MESSAGES = {
    "missing": QUOTE + ", but it has no such heading{at}. {hint}",
    "no-file": QUOTE + ", a file that is not there{at}.",
    "duplicated": QUOTE + ", where it appears {count} times{at} (lines {lines}); "
    "a reference must find exactly one. Reword one of them.",
    "ambiguous": QUOTE + ": {count} files have that name ({candidates}) and {held} holds "
    "the heading. Name the path.",
    "merge-order": QUOTE + ", which has no such heading yet{at}; it appears once on the head of "
    "{pr} (line {pr_line}). This resolves only once {pr} merges; merge that first.",
    # {reason} alone: for a repository that was not read, saying more would tell what is in it.
    "unverifiable": QUOTE + ": {reason}.",
    "removed-still-quoted": "{what}, but it is still quoted by {referrers}. Update them in this "
    "PR, or keep the heading.",
    "reworded-explained": "{what}; only {explained} quotes the old wording, which reads as the PR "
    "explaining its change. No file quotes it.",
    "paired-half": "{what}, but at base {other} held the same heading and still does (line {line}). "
    "Change both halves of the pair together.",
    "loose-reference": "{where} mentions “{text}” near {file}, though not in a reference form: "
    "{detail} If it is meant as a reference, write it as: see “{text}” in {file}. If not, "
    "nothing to do.",
    "removed-loosely-quoted": "{what}; {referrers} still {mention} it{how}. Check whether they "
    "meant this heading.",
    "anchor-missing": "{where} links to {written}, but {file} has no anchor #{anchor}{at}. {hint}",
    "anchor-merge-order": "{where} links to {written}, an anchor {file} has only on the head of "
    "{pr} (line {pr_line}). This resolves only once {pr} merges; merge that first.",
    "anchor-removed-still-linked": "{what}, so the anchor #{anchor} is gone, but {referrers} "
    "still link to it. Update those links in this PR, or keep the anchor (an "
    '<a name="{anchor}"></a> where the heading was).',
}
# The reason a loose mention is only a notice, per what its resolution found.
LOOSE_DETAILS = {
    "missing": "that file has no such heading{at}. {hint}",
    "duplicated": "that file has it {count} times{at} (lines {lines}).",
    "ambiguous": "{count} files have that name ({candidates}) and {held} holds the heading.",
    "merge-order": "it is a heading there only on the head of {pr} (line {pr_line}).",
}
NO_ANCHOR_HINT = "It has no heading with an anchor close to that."
ANCHOR_HINT = "Closest anchors there: {close}."
NO_HINT = "No heading there comes close."
EMPHASIS = (
    "matches no heading there, nor comes close to one: read as emphasis, not a reference "
    "(write “see “…” in FILE” to have it checked)"
)
AS_TEXT = "stands there as text, not as a heading: a quote of what the file says, not a reference"
# A line longer than the cap, read only to it (bot/textlines.py's MAX_LINE_CHARS).
CUT_LINE = (
    "{where}: read to its first {cap:,} characters only (a longer line is data, not text that "
    "quotes a heading or links an anchor)"
)
NO_FILE = (
    "names no file, and quoted ALL-CAPS text alone is not a reference: many headings share a text "
    "(WHY THIS EXISTS), so it was not checked"
)


def finding(
    rule: str,
    subject: str,
    path: str | None,
    line: int | None,
    message: str,
    source: str,
    data: dict[str, Any],
) -> Finding:
    return Finding(
        check=CHECK_NAME,
        severity=SEVERITY[rule],
        title=TITLES[rule],
        message=message,
        rule=rule,
        subject=subject,
        path=path,
        line=line if path else None,
        data={"source": source, **data},
    )
