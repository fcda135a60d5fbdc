"""Markdown anchor links, the most common cross-reference of a chart repository's docs: a link the
PR adds must reach an anchor of its file (here, or in a linked repository for a blob URL), and an
anchor the PR removes must not still be linked from elsewhere.

A link to a file that is not there is left to link checkers: that is no heading's business."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from bot.git.objects import ChangedFile, GitView
from bot.model.context import Context, OpenPR
from bot.model.report import Finding, Severity
from bot.textlines import git_lines
from checks.headings.files import TreeFiles
from checks.headings.index import tree_index
from checks.headings.mdlinks import AnchorLink, anchor_links
from checks.headings.messages import ANCHOR_HINT, MESSAGES, NO_ANCHOR_HINT, finding
from checks.headings.removals import head_line, pr_texts
from checks.headings.resolve import SUGGESTION_CUTOFF, SUGGESTIONS, LinkedTree, Resolver
from checks.headings.slugs import Anchor, find_anchor
from checks.headings.text import is_markdown

PREEXISTING = " It was already broken at base, so it is not this PR's doing."
AT_HEAD = " at the PR head"


@dataclass
class AnchorOutcome:
    findings: list[Finding] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)  # for --explain
    unchecked: list[str] = field(default_factory=list)  # for --explain


@dataclass(frozen=True)
class Added:
    """An anchor link the PR writes, and where."""

    link: AnchorLink
    change: ChangedFile | None  # None in the PR's title, description or commits
    where: str


def review_anchors(
    ctx: Context, head: TreeFiles, base: TreeFiles, resolver: Resolver
) -> AnchorOutcome:
    out = AnchorOutcome()
    for added in _added_links(ctx, head):
        if added.link.repo is None:
            _judge_local(ctx, head, base, resolver, added, out)
        else:
            _judge_linked(resolver, base, added, out)
    out.findings += removed_anchor_findings(ctx, head, base)
    return out


def _added_links(ctx: Context, head: TreeFiles) -> Iterator[Added]:
    for change in ctx.changes:
        file = head.file(change.path) if change.added_lines else None
        if change.status == "D" or file is None:
            continue
        for link in anchor_links(change.path, file.lines, change.added_lines):
            yield Added(link, change, f"{change.path} line {link.line}")
    for label, text in pr_texts(ctx.pr):
        for link in anchor_links(None, git_lines(text)):
            yield Added(link, None, label)


def target_path(files: TreeFiles, link: AnchorLink, source: str) -> str | None:
    """The file a local link leads to: its path, or for a bare `README.md#x` mention the one file
    that name may mean (none when several may)."""
    if not link.bare:
        return link.path if files.has(link.path) else None
    candidates = files.candidates(link.path, source)
    return candidates[0] if len(candidates) == 1 else None


def _judge_local(
    ctx: Context,
    head: TreeFiles,
    base: TreeFiles,
    resolver: Resolver,
    added: Added,
    out: AnchorOutcome,
) -> None:
    link, change = added.link, added.change
    path = target_path(head, link, change.path) if change is not None else None
    if path is None:
        out.unchecked.append(f"{link.written} ({added.where}): no single file {link.path} here")
        return
    anchors = head.anchors(path)
    if found := find_anchor(anchors, link.anchor):
        out.resolved.append(f"{link.written} ({added.where}) → {path} line {found.line}")
        return
    if (pr := _holding_pr(resolver, ctx.git, ctx.open_prs, path, link.anchor)) is not None:
        out.findings.append(_merge_order(added, path, *pr))
        return
    broken_before = _broken_at_base(base, change, link, path)
    out.findings.append(_missing(added, path, AT_HEAD, anchors, preexisting=broken_before))


def _judge_linked(resolver: Resolver, base: TreeFiles, added: Added, out: AnchorOutcome) -> None:
    link = added.link
    assert link.repo is not None
    label = f"{link.repo}:{link.path}"
    tree = resolver.linked_files(link.repo, link.ref)
    if not isinstance(tree, LinkedTree):
        out.unchecked.append(f"{link.written} ({added.where}): {tree}")
        return
    if not tree.files.has(link.path):
        out.unchecked.append(f"{link.written} ({added.where}): no file {label}{tree.where}")
        return
    anchors = tree.files.anchors(link.path)
    if found := find_anchor(anchors, link.anchor):
        out.resolved.append(f"{link.written} ({added.where}) → {label} line {found.line}")
        return
    pr = _holding_pr(resolver, tree.git, tree.open_prs, link.path, link.anchor)
    if pr is not None:
        out.findings.append(_merge_order(added, label, *pr, repo=link.repo))
        return
    old = added.change is not None and _base_has(base, added.change, link)
    out.findings.append(_missing(added, label, tree.where, anchors, link.repo, preexisting=old))


def _holding_pr(
    resolver: Resolver, git: GitView, prs: tuple[OpenPR, ...], path: str, name: str
) -> tuple[OpenPR, Anchor] | None:
    for pr in prs:
        try:
            found = find_anchor(resolver.files(git, pr.head).anchors(path), name)
        except Exception:  # a PR head that cannot be read holds nothing we can name
            continue
        if found is not None:
            return pr, found
    return None


def _base_has(base: TreeFiles, change: ChangedFile, link: AnchorLink) -> bool:
    text = base.text(change.old_path or change.path)
    return text is not None and link.written in text


def _broken_at_base(
    base: TreeFiles, change: ChangedFile | None, link: AnchorLink, path: str
) -> bool:
    """The base already wrote this link, and its file had no such anchor there either."""
    if change is None:
        return False
    text = base.text(change.old_path or change.path)
    if text is None or link.written not in text or not base.has(path):
        return False
    return find_anchor(base.anchors(path), link.anchor) is None


def _missing(
    added: Added,
    file: str,
    at: str,
    anchors: tuple[Anchor, ...],
    repo: str | None = None,
    preexisting: bool = False,
) -> Finding:
    link = added.link
    names = list(dict.fromkeys(a.name for a in anchors))
    close = difflib.get_close_matches(
        link.anchor.lower(), names, n=SUGGESTIONS, cutoff=SUGGESTION_CUTOFF
    )
    lines = {a.name: a.line for a in reversed(anchors)}
    shown = ", ".join(f"#{name} (line {lines[name]})" for name in close)
    hint = ANCHOR_HINT.format(close=shown) if close else NO_ANCHOR_HINT
    fields = {"where": added.where, "written": link.written, "file": file, "at": at}
    message = MESSAGES["anchor-missing"].format(anchor=link.anchor, hint=hint, **fields)
    data: dict[str, Any] = {"file": file, "anchor": link.anchor, "suggestions": close}
    if repo is not None:
        data["repo"] = repo
    if preexisting:
        message += PREEXISTING
    result = _on_source("anchor-missing", f"{file}#{link.anchor}", added, message, data)
    return replace(result, severity=Severity.NOTICE, preexisting=True) if preexisting else result


def _merge_order(
    added: Added, file: str, pr: OpenPR, found: Anchor, repo: str | None = None
) -> Finding:
    name = f"{repo or ''}#{pr.number}"
    fields = {"where": added.where, "written": added.link.written, "file": file}
    message = MESSAGES["anchor-merge-order"].format(pr=name, pr_line=found.line, **fields)
    data = {"file": file, "anchor": added.link.anchor, "pr": pr.number}
    return _on_source("anchor-merge-order", f"{file}#{added.link.anchor}", added, message, data)


def _on_source(
    rule: str, subject: str, added: Added, message: str, data: dict[str, Any]
) -> Finding:
    path = added.change.path if added.change is not None else None
    return finding(rule, subject, path, added.link.line, message, added.where, data)


# -- the other direction --------------------------------------------------------------------------


@dataclass(frozen=True)
class Gone:
    """An anchor the base has in a Markdown file and the PR's head no longer has."""

    path: str
    anchor: Anchor  # at base
    head_line: int  # the nearest head line of the hunk, for an inline comment


def removed_anchors(ctx: Context, head: TreeFiles, base: TreeFiles) -> list[Gone]:
    """Anchors the PR takes away from a file it keeps (a deleted or renamed file breaks links to
    the file itself, which is left to link checkers). Compared as sets of names: removing the
    first of two `Usage` headings takes `#usage-1`, not `#usage`."""
    gone: list[Gone] = []
    for change in ctx.changes:
        if change.status != "M" or not change.removed_lines or not is_markdown(change.path):
            continue
        kept = {a.name.lower() for a in head.anchors(change.path)}
        base_text = base.text(change.path)
        head_text = head.text(change.path)
        if base_text is None or head_text is None:
            continue
        for anchor in base.anchors(change.path):
            if anchor.name.lower() not in kept:
                line = head_line(base_text, head_text, anchor.line)
                gone.append(Gone(change.path, anchor, line))
    return gone


def removed_anchor_findings(ctx: Context, head: TreeFiles, base: TreeFiles) -> list[Finding]:
    gone = removed_anchors(ctx, head, base)
    if not gone:
        return []
    linked = _linking_lines(ctx, head, gone)
    findings = []
    for item in gone:
        if referrers := linked[item]:
            findings.append(_removed_finding(item, referrers))
    return findings


def _linking_lines(ctx: Context, head: TreeFiles, gone: list[Gone]) -> dict[Gone, list[str]]:
    """Which head lines, other than the ones the PR adds (judged as added links), link to each
    removed anchor."""
    added = {c.path: c.added_lines for c in ctx.changes}
    wanted = {(g.path, g.anchor.name.lower()): g for g in gone}
    needles = {"#" + name for _, name in wanted}
    linked: dict[Gone, list[str]] = {g: [] for g in gone}
    index = tree_index(ctx.head, ctx.base, ctx.changes)
    for path in sorted(index.may_link(name for _, name in wanted) & head.paths):
        file = head.file(path)
        if file is None or not any(n in file.text.lower() for n in needles):
            continue
        for link in anchor_links(path, file.lines):
            target = target_path(head, link, path) if link.repo is None else None
            item = wanted.get((target or "", link.anchor.lower()))
            if item is not None and link.line not in added.get(path, frozenset()):
                linked[item].append(f"{path} line {link.line}")
    return linked


def _removed_finding(item: Gone, referrers: list[str]) -> Finding:
    anchor = item.anchor
    where = f"{item.path} line {anchor.line} at base"
    what = (
        f"This PR changes the heading “{anchor.heading}” ({where})"
        if anchor.heading is not None
        else f"This PR removes the explicit anchor ({where})"
    )
    message = MESSAGES["anchor-removed-still-linked"].format(
        what=what, anchor=anchor.name, referrers=" and ".join(referrers)
    )
    data = {"base_line": anchor.line, "anchor": anchor.name, "referrers": referrers}
    subject = f"{item.path}#{anchor.name}"
    return finding(
        "anchor-removed-still-linked", subject, item.path, item.head_line, message, where, data
    )
