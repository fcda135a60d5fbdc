"""The `headings` check: an explicit reference to a heading (an ALL-CAPS comment heading or a Markdown
heading, quoted together with the file that holds it: "see `ROLLBACK ON THE DEGRADED PATH` in
FILE", "X (FILE)", "FILE § X", "the heading X in FILE", `owner/name:path`) must resolve exactly once
in that file, here or in a linked repository; a Markdown anchor link (`[t](docs/x.md#some-heading)`,
`#local`, `README.md#…`, a GitHub blob URL with `#anchor`) must reach an anchor by GitHub's rules
(`anchor-missing`, naming the closest anchors); a heading the PR removes or rewords must not still
be quoted by an explicit reference or targeted by a link; a heading or anchor that exists only on
another open PR is said too (merge that first).

Only what the PR says is checked: references on the lines it adds, in its title, description and
commit messages. Only an explicit reference (checks/headings/forms.py) may fail: capitals or a quote
that merely stand near a file name are at most a notice (`loose-reference`), words the file holds
as text (a log line, SQL) are a quote, never a finding, and a Markdown table is read row by row (a
quote is never paired with a file another row names). A reference already broken at base is not
the PR's doing. Which other repositories it may read: the config's `links`
([config.md](config.md))."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from bot.model.check import Check
from bot.model.context import Context
from bot.model.report import Finding, Severity
from bot.textlines import MAX_LINE_CHARS
from checks.headings.anchors import review_anchors
from checks.headings.files import TreeFiles
from checks.headings.messages import (
    AS_TEXT,
    CHECK_NAME,
    CUT_LINE,
    EMPHASIS,
    LOOSE_DETAILS,
    MESSAGES,
    NO_FILE,
    NO_HINT,
    finding,
)
from checks.headings.refs import FileRef, Reference, references
from checks.headings.removals import cut_pr_lines, pr_texts, removed_headings
from checks.headings.removed import removal_findings
from checks.headings.resolve import Resolution, Resolver
from checks.headings.text import comment_heading
from checks.headings.units import file_units, prose_units


@dataclass(frozen=True)
class Seen:
    """A reference and where it was read."""

    ref: Reference
    path: str | None  # the head file it is in; None in the PR's title, description or commits
    where: str  # "docs/a.md line 3", "the PR description"


@dataclass(frozen=True)
class Outcome:
    findings: tuple[Finding, ...]
    resolved: tuple[str, ...]  # for --explain: what was checked and found
    unchecked: tuple[str, ...]  # for --explain: what looked like a reference and why it is not one


def run(ctx: Context) -> list[Finding]:
    return list(review(ctx).findings)


def explain(ctx: Context) -> list[str]:
    outcome = review(ctx)
    return [f"resolved: {line}" for line in outcome.resolved] + [
        f"not checked: {line}" for line in outcome.unchecked
    ]


def review(ctx: Context) -> Outcome:
    head, base = TreeFiles(ctx.head), TreeFiles(ctx.base)  # each file read once for all below
    resolver = Resolver(ctx, head)
    removals = removed_headings(base, head, ctx.changes)
    findings: list[Finding] = []
    resolved: list[str] = []
    unchecked: list[str] = []
    for seen in _references(ctx, head):
        if seen.path is None and any(_contains(seen.ref.text, r.text) for r in removals):
            continue  # the PR describing its own rewording: judged with the removal below
        if seen.ref.file is None and (seen.ref.side is None or seen.path is None):
            if seen.ref.quoted and not seen.ref.loose and _is_caps(seen.ref.text):
                unchecked.append(f"“{seen.ref.text}” in {seen.where} {NO_FILE}")
            continue
        resolution = resolver.resolve(seen.ref, seen.path)
        if resolution.kind == "resolved":
            resolved.append(_resolved_line(seen, resolution))
        elif resolution.kind == "as-text":
            unchecked.append(_as_text_line(seen, resolution))
        elif seen.ref.explicit:
            found = _reference_finding(seen, resolution)
            findings.append(_folded(found) if _quoted_at_base(ctx, base, seen) else found)
        elif resolution.kind in LOOSE_DETAILS and not _emphasis(resolution):
            findings.append(_reference_finding(seen, resolution, loose=True))
        else:
            unchecked.append(f"“{seen.ref.text}” in {seen.where} near {resolution.file} {EMPHASIS}")
    if removals:
        findings += removal_findings(ctx, head, removals, resolved)
    links = review_anchors(ctx, head, base, resolver)
    findings += links.findings
    resolved += links.resolved
    unchecked += links.unchecked + _cut_lines(ctx, head)
    # The PR description is often repeated in a squash commit's message: one finding for both.
    unique = {
        (f.rule, f.subject, f.path, f.line, f.data.get("file")): f for f in reversed(findings)
    }
    return Outcome(
        tuple(reversed(unique.values())),
        tuple(dict.fromkeys(resolved)),
        tuple(dict.fromkeys(unchecked)),
    )


def _quoted_at_base(ctx: Context, base: TreeFiles, seen: Seen) -> bool:
    """Whether the base's version of the file already held this reference: the PR only rewrote
    its line (a bullet, a wrap, a reformatted changelog), so it is not the PR's to answer for.
    Found on a public repository (issue 38): a changelog whose `*` bullets became `-` had every
    old entry's "`x` section in README.md" checked as if the PR wrote it."""
    if seen.path is None or seen.ref.file is None:
        return False
    change = ctx.changed(seen.path)
    old = base.file(change.old_path or seen.path) if change is not None else None
    if old is None or seen.ref.text not in old.text:
        return False
    holding = re.compile(re.escape(seen.ref.text))
    return any(
        r.text == seen.ref.text and r.file == seen.ref.file
        for unit in file_units(old, None, holding)
        for r in references(unit, lambda f: True)
    )


def _folded(found: Finding) -> Finding:
    """A reference the base already held, as every check folds what was there before the PR."""
    return replace(
        found,
        severity=Severity.NOTICE,
        title=f"{found.title} (already at base)",
        preexisting=True,
    )


def _cut_lines(ctx: Context, head: TreeFiles) -> list[str]:
    """The lines the PR writes that were read only in part (longer than MAX_LINE_CHARS)."""
    wheres = [
        f"{change.path} line {n}"
        for change in ctx.changes
        if change.added_lines and change.status != "D" and (file := head.file(change.path))
        for n in file.cut
        if n in change.added_lines
    ]
    return [CUT_LINE.format(where=w, cap=MAX_LINE_CHARS) for w in wheres + cut_pr_lines(ctx.pr)]


def _emphasis(resolution: Resolution) -> bool:
    """A mention that finds nothing like it in the file it stands near is emphasis
    (`BREAKING CHANGE: drops a key from values.yaml`), not a reference to a heading that is gone;
    a near miss, a repeat or an open PR holding it is worth a notice."""
    found = resolution.found
    if found is None:
        return True
    return (found.kind == "missing" and not found.suggestions) or (
        found.kind == "ambiguous" and not found.holders
    )


def _is_caps(text: str) -> bool:
    return comment_heading(text) == text


def _contains(quote: str, heading: str) -> bool:
    return f" {heading} " in f" {quote} "


def _references(ctx: Context, head: TreeFiles) -> Iterator[Seen]:
    for change in ctx.changes:
        file = head.file(change.path) if change.added_lines else None
        if change.status == "D" or file is None:
            continue

        def keep(file: FileRef, at: str = change.path) -> bool:
            return bool(file.repo or head.candidates(file.path, at) or ctx.base.is_file(file.path))

        for unit in file_units(file, change.added_lines):
            for ref in references(unit, keep, change.added_lines):
                yield Seen(ref, change.path, f"{change.path} line {ref.line}")
    for label, text in pr_texts(ctx.pr):
        for unit in prose_units(text):
            for ref in references(unit, lambda f: bool(f.repo or head.candidates(f.path))):
                yield Seen(ref, None, label)


def _resolved_line(seen: Seen, resolution: Resolution) -> str:
    assert resolution.found is not None
    found = resolution.found
    where = f"{resolution.repo}:{found.path}" if resolution.repo else found.path
    return f"“{found.text}” ({seen.where}) → {where} line {found.lines[0]}{resolution.at}"


def _as_text_line(seen: Seen, resolution: Resolution) -> str:
    assert resolution.found is not None
    line = resolution.found.lines[0]
    return f"“{seen.ref.text}” in {seen.where}: {resolution.file} line {line} {AS_TEXT}"


def _reference_finding(seen: Seen, resolution: Resolution, loose: bool = False) -> Finding:
    found = resolution.found
    rule = "missing" if resolution.kind == "no-file" else resolution.kind
    fields: dict[str, Any] = {
        "where": seen.where,
        "text": seen.ref.text,
        "file": resolution.file,
        "at": resolution.at,
        "reason": resolution.reason,
    }
    data: dict[str, Any] = {"file": resolution.file, "repo": resolution.repo}
    if found is not None:
        close = ", ".join(f"“{h.text}” (line {h.line})" for h in found.suggestions)
        fields |= {
            "count": len(found.lines) or len(found.candidates),
            "lines": ", ".join(str(n) for n in found.lines),
            "candidates": ", ".join(found.candidates),
            "held": ", ".join(found.holders) or "none of them",
            "hint": f"Closest headings there: {close}." if close else NO_HINT,
        }
        data |= {"lines": list(found.lines), "suggestions": [h.text for h in found.suggestions]}
        if found.candidates:
            data["candidates"] = list(found.candidates)
    if resolution.pr is not None and found is not None:
        name = f"{resolution.repo or ''}#{resolution.pr.number}"
        fields |= {"pr": name, "pr_line": found.lines[0]}
        data["pr"] = resolution.pr.number
    message = MESSAGES[resolution.kind].format(**fields)
    if loose:
        detail = LOOSE_DETAILS[resolution.kind].format(**fields)
        message = MESSAGES["loose-reference"].format(detail=detail, **fields)
        rule, data = "loose-reference", {**data, "kind": resolution.kind}
    return finding(rule, seen.ref.text, seen.path, seen.ref.line, message, seen.where, data)


CHECK = Check(CHECK_NAME, "Heading references", run, "repo", explain=explain)
