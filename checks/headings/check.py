"""Check `headings`: a reference to a heading (an ALL-CAPS comment heading or a Markdown heading,
quoted together with the file that holds it, here or in a linked repository) must find it exactly
once; a heading the PR removes or rewords must not still be quoted.

Only what the PR says is checked: references on the lines it adds, in its title, description and
commit messages. A reference already broken at base is not the PR's doing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bot.engine.check import Check
from bot.engine.context import Context
from bot.engine.report import Finding, Severity
from checks.headings.files import TreeFiles, readable_text
from checks.headings.refs import FileRef, Reference, file_units, prose_units, references
from checks.headings.removals import (
    Removal,
    paired_halves,
    pr_texts,
    quoting_files,
    quoting_pr_text,
    removed_headings,
)
from checks.headings.resolve import Resolution, Resolver
from checks.headings.text import comment_heading

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
}
NO_HINT = "No heading there comes close."
EMPHASIS = (
    "matches no heading there, nor comes close to one: read as emphasis, not a reference "
    "(quote it to have it checked)"
)
NO_FILE = (
    "names no file, and quoted ALL-CAPS text alone is not a reference: many headings share a text "
    "(WHY THIS EXISTS), so it was not checked"
)


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
    head = TreeFiles(ctx.head)
    resolver = Resolver(ctx, head)
    removals = removed_headings(ctx.base, ctx.head, ctx.changes)
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
        elif _emphasis(seen.ref, resolution):
            unchecked.append(f"“{seen.ref.text}” in {seen.where} near {resolution.file} {EMPHASIS}")
        else:
            findings.append(_reference_finding(seen, resolution))
    if removals:
        findings += _removal_findings(ctx, head, removals, resolved)
    # The PR description is often repeated in a squash commit's message: one finding for both.
    unique = {
        (f.rule, f.subject, f.path, f.line, f.data.get("file")): f for f in reversed(findings)
    }
    return Outcome(
        tuple(reversed(unique.values())),
        tuple(dict.fromkeys(resolved)),
        tuple(dict.fromkeys(unchecked)),
    )


def _emphasis(ref: Reference, resolution: Resolution) -> bool:
    """Bare capitals in prose (or a string literal in code) that find nothing like them in the file
    they stand near are emphasis (`BREAKING CHANGE: drops a key from values.yaml`), not a reference
    to a heading that is gone; a quote in prose, `(above)`/`(below)` or a near miss is reported."""
    found = resolution.found
    if not ref.loose or ref.side is not None or found is None:
        return False
    return (found.kind == "missing" and not found.suggestions) or (
        found.kind == "ambiguous" and not found.holders
    )


def _is_caps(text: str) -> bool:
    return comment_heading(text) == text


def _contains(quote: str, heading: str) -> bool:
    return f" {heading} " in f" {quote} "


def _references(ctx: Context, head: TreeFiles) -> Iterator[Seen]:
    base_paths = frozenset(ctx.base.paths())
    for change in ctx.changes:
        text = readable_text(ctx.head, change.path) if change.added_lines else None
        if change.status == "D" or text is None:
            continue

        def keep(file: FileRef, at: str = change.path) -> bool:
            return bool(file.repo or head.candidates(file.path, at) or file.path in base_paths)

        for unit in file_units(change.path, text, change.added_lines):
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


def _reference_finding(seen: Seen, resolution: Resolution) -> Finding:
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
    return _finding(rule, seen.ref.text, seen.path, seen.ref.line, message, seen.where, data)


def _finding(
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


def _removal_findings(
    ctx: Context, head: TreeFiles, removals: list[Removal], resolved: list[str]
) -> list[Finding]:
    quoted = quoting_files(ctx, head, removals)
    halves = paired_halves(ctx, head, removals)
    findings = []
    for removal in removals:
        if quoted[removal]:
            referrers = quoted[removal]
            findings.append(_removal_finding("removed-still-quoted", removal, referrers=referrers))
        elif explained := quoting_pr_text(ctx.pr, removal):
            findings.append(_removal_finding("reworded-explained", removal, explained=explained))
        else:
            resolved.append(
                f"removed heading “{removal.text}” ({_where(removal)}): nothing quotes it"
            )
        if removal in halves:
            other, line = halves[removal]
            findings.append(_removal_finding("paired-half", removal, other=other, line=line))
    return findings


def _where(removal: Removal) -> str:
    return f"{removal.base_path} line {removal.base_line} at base"


def _removal_finding(rule: str, removal: Removal, **extra: Any) -> Finding:
    """On the hunk that removed the heading: its nearest head line, so it can be an inline comment
    (the base line is in data); a deleted file gets no line."""
    where = _where(removal)
    shown = {k: " and ".join(v) if isinstance(v, list) else v for k, v in extra.items()}
    to = f" to “{removal.new_wording}”" if removal.new_wording else ""
    what = f"This PR {'rewords' if to else 'removes'} the heading “{removal.text}” ({where}){to}"
    message = MESSAGES[rule].format(what=what, **shown)
    data = {
        "base_path": removal.base_path,
        "base_line": removal.base_line,
        "new_wording": removal.new_wording,
        **extra,
    }
    path = removal.head_path or removal.base_path
    return _finding(rule, removal.text, path, removal.head_line, message, where, data)


CHECK = Check(CHECK_NAME, "Heading references", run, "repo", explain=explain)
