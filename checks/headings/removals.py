"""The other direction: headings the PR removes or rewords, and who still quotes them."""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass

from bot.git.objects import ChangedFile, Tree
from bot.model.context import Context, PullRequestInfo
from bot.textlines import git_lines
from checks.headings.files import (
    TreeFiles,
    heading_pattern,
    read_text,
    readable_text,
    tree_paths,
)
from checks.headings.filetext import FileText
from checks.headings.index import TreeIndex, tree_index
from checks.headings.refs import FileRef, Reference, references
from checks.headings.text import (
    MIN_CAPITALS,
    comment_heading,
    find_headings,
    line_comment,
)
from checks.headings.units import file_units


@dataclass(frozen=True)
class Referrer:
    """A line that still quotes a removed heading, and whether in a reference form."""

    where: str  # "docs/a.md line 3"
    explicit: bool


@dataclass(frozen=True)
class Removal:
    """A heading the base holds in a file and the PR's diff removes from it."""

    text: str
    base_path: str
    base_line: int
    head_path: str | None  # None: the PR deletes the file
    head_line: int | None  # the nearest head line of the hunk, for an inline comment
    new_wording: str | None  # the heading the PR adds in its place, when it rewords


def removed_headings(
    base: TreeFiles, head: TreeFiles, changes: tuple[ChangedFile, ...]
) -> list[Removal]:
    removals: list[Removal] = []
    for change in changes:
        old_path = change.old_path or change.path
        base_file = base.file(old_path) if change.removed_lines else None
        if base_file is None or not _may_remove(base_file, change.removed_lines):
            continue
        base_text = base_file.text
        gone = [h for h in base.headings(old_path) if h.line in change.removed_lines]
        head_text = head.text(change.path) if change.status != "D" else None
        head_headings = head.headings(change.path) if head_text is not None else ()
        kept = {h.text for h in head_headings}
        base_texts = {h.text for h in base.headings(old_path)}
        added = [
            h for h in head_headings if h.line in change.added_lines and h.text not in base_texts
        ]
        for heading in gone:
            if heading.text in kept:
                continue  # moved within the file, or one of two copies removed
            line = head_line(base_text, head_text, heading.line) if head_text is not None else None
            wording = min(added, key=lambda h: abs(h.line - (line or 0))).text if added else None
            path = change.path if head_text is not None else None
            removals.append(Removal(heading.text, old_path, heading.line, path, line, wording))
    return removals


def _may_remove(file: FileText, removed: frozenset[int]) -> bool:
    """Whether a removed line may hold a heading; told from those lines alone where it can be, so
    that neither side's file is read whole for nothing (a values.yaml's change removes values, a
    template's its code, seldom a heading). Outside Markdown a heading is ALL-CAPS, its capitals
    on its line whatever comment holds it; where lines_stand_alone, a line's comment is its own."""
    if file.markdown:
        return True
    lines = file.lines
    gone = [lines[n - 1] for n in removed if 0 < n <= len(lines)]
    if file.stands_alone:  # a heading is a comment's own: only comment lines are read
        return any(body is not None and comment_heading(body) for body in map(line_comment, gone))
    return any(sum(map(str.isupper, line)) >= MIN_CAPITALS for line in gone)


def head_line(base_text: str, head_text: str, base_line: int) -> int:
    """The head line of the hunk that removed `base_line`: its replacement, else the line before."""
    base_lines, head_lines = git_lines(base_text), git_lines(head_text)
    matcher = difflib.SequenceMatcher(None, base_lines, head_lines, autojunk=False)
    index = base_line - 1
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 <= index < i2 and tag != "equal":
            line = j1 + 1 + min(index - i1, j2 - j1 - 1) if j2 > j1 else j1
            return max(1, min(line, len(head_lines)))
    return max(1, min(base_line, len(head_lines)))


def quoting_files(
    ctx: Context, files: TreeFiles, removals: list[Removal]
) -> dict[Removal, list[Referrer]]:
    """Where the head tree still quotes each removed heading, leaving out lines the PR adds (those
    are references the forward check resolves and reports)."""
    added = {c.path: c.added_lines for c in ctx.changes}
    pattern = heading_pattern({r.text for r in removals})
    # A unit quotes a heading only where it holds its words, so only the units with a line holding
    # one's first word are cut and looked at (a README that quotes it once is hundreds of
    # paragraphs, a dashboard thousands of lines), and of those, the ones holding all its words.
    words = heading_pattern({r.text for r in removals}, whole_words=False)
    first_words = re.compile("|".join(re.escape(r.text.split()[0]) for r in removals))
    base_paths = tree_paths(ctx.base)
    known = base_paths | {posixpath.basename(p) for p in base_paths}
    quoted: dict[Removal, list[Referrer]] = {r: [] for r in removals}

    def keep(file: FileRef) -> bool:
        if file.repo is not None:
            return False
        return bool(files.candidates(file.path)) or file.path in known

    index = tree_index(ctx.head, ctx.base, ctx.changes)
    for path in sorted(index.may_quote(r.text for r in removals) & files.paths):
        read = files.file(path)
        if read is None or not pattern.search(read.text):
            continue
        lines = _lines_holding(read.text, first_words)
        for unit in file_units(read, lines, holding=words):
            for ref in references(unit, keep):
                if ref.line in added.get(path, frozenset()):
                    continue
                for removal in removals:
                    if _quotes(files, ref, path, removal):
                        quoted[removal].append(Referrer(f"{path} line {ref.line}", ref.explicit))
    return quoted


def _lines_holding(text: str, pattern: re.Pattern[str]) -> frozenset[int]:
    """The numbers of the lines where `pattern` finds something, counted at `\n` as git counts."""
    numbers, line, at = set(), 1, 0
    for match in pattern.finditer(text):
        line += text.count("\n", at, match.start())
        at = match.start()
        numbers.add(line)
    return frozenset(numbers)


def _quotes(files: TreeFiles, ref: Reference, path: str, removal: Removal) -> bool:
    if f" {removal.text} " not in f" {ref.text} ":
        return False
    if ref.side is not None:
        return path == removal.head_path
    if ref.file is None or ref.file.repo is not None:
        return False
    named = ref.file.path
    if removal.head_path is not None and removal.head_path in files.candidates(named, path):
        return True
    return named == removal.base_path or named == posixpath.basename(removal.base_path)


def quoting_pr_text(pr: PullRequestInfo, removal: Removal) -> list[str]:
    """Which of the PR's own texts (title, description, commit messages) quote the heading."""
    pattern = heading_pattern([removal.text])
    return [label for label, text in pr_texts(pr) if pattern.search(text)]


def pr_texts(pr: PullRequestInfo) -> list[tuple[str, str]]:
    """The PR's title, description and commit messages, each read as a file is (`read_text`)."""
    return [(label, read_text(text)[0]) for label, text in _raw_pr_texts(pr)]


def cut_pr_lines(pr: PullRequestInfo) -> list[str]:
    """Where the PR's own texts hold a line read only in part: `the PR description line 3`."""
    return [f"{label} line {n}" for label, text in _raw_pr_texts(pr) for n in read_text(text)[1]]


def _raw_pr_texts(pr: PullRequestInfo) -> list[tuple[str, str]]:
    texts = [("the PR title", pr.title), ("the PR description", pr.body)]
    texts += [(f"commit {c.sha[:7]}", c.message or c.subject) for c in pr.commits]
    return [(label, text) for label, text in texts if text]


def paired_halves(
    ctx: Context, head_files: TreeFiles, removals: list[Removal]
) -> dict[Removal, tuple[str, int]]:
    """Removals of a heading that the base holds in exactly two files (a template and its paired
    test, say) while the other file keeps it at head: (the other path, its head line)."""
    # Markdown titles such as `Usage` recur in every chart's README; pairs are ALL-CAPS decisions.
    paired = [r for r in removals if comment_heading(r.text) == r.text]
    if not paired:
        return {}
    holders = _holders_at_base(ctx.base, tree_index(ctx.base), {r.text for r in paired})
    halves: dict[Removal, tuple[str, int]] = {}
    for removal in paired:
        paths = holders.get(removal.text, set())
        if len(paths) != 2 or removal.base_path not in paths:
            continue
        (other,) = paths - {removal.base_path}
        lines = [h.line for h in head_files.headings(other) if h.text == removal.text]
        if lines:
            halves[removal] = (other, lines[0])
    return halves


def _holders_at_base(base: Tree, index: TreeIndex, texts: set[str]) -> Mapping[str, set[str]]:
    pattern = heading_pattern(texts)
    holders: dict[str, set[str]] = {}
    for path in index.may_quote(texts):
        text = readable_text(base, path)
        if text is None or not pattern.search(text):
            continue
        for heading in find_headings(path, text):
            if heading.text in texts:
                holders.setdefault(heading.text, set()).add(path)
    return holders
