"""Inline review comments for a report: on the lines the PR added or changed at head, one per line
and rule, with a GitHub suggested change where a finding's fix is proven; found again by a hidden
marker on re-runs and edited, never repeated (reviewdog's rule: findings elsewhere are check-run
annotations, not review comments). Pure, as bot/report/bodies.py: the App's and the Action's
publisher sends what this decides."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from bot.model.markdown_safe import inline, prose
from bot.model.report import Finding, Report, Severity, icon
from bot.model.suggestion import Suggestion
from bot.report.bodies import MAX_COMMENT_CHARS, fit, where_spans

# Opens each inline comment: which line's rule it is for, so a re-run edits it, never repeats it.
INLINE_MARKER = "<!-- chart-review:inline {key} -->\n"
INLINE_MARKER_RE = re.compile(r"<!-- chart-review:inline (?P<key>[^\s>]+) -->")


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    body: str
    # A multi-line comment (a suggestion replacing several lines) starts here; None: one line.
    start_line: int | None = None


@dataclass(frozen=True)
class PostedComment:
    """A review comment the bot posted before: found again by its marker's line and rule."""

    id: int
    path: str
    line: int | None  # its line now, else the one it was posted on (an outdated comment)
    body: str


@dataclass(frozen=True)
class InlinePlan:
    """What a review sends as inline comments: the new ones, in one review, and the bodies of
    those already posted whose words changed (comment id, body)."""

    new: tuple[InlineComment, ...]
    edits: tuple[tuple[int, str], ...]


def inline_body(f: Finding, profiles: Sequence[str] = ()) -> str:
    """A finding's words for its inline comment; `profiles`: every profile the comment speaks for
    (one comment per line and rule, whatever the number of profiles)."""
    shown = f if len(profiles) < 2 else replace(f, profile=", ".join(profiles))
    place = where_spans(shown)
    parts = [
        f"{icon(f.severity)} **{inline(f.title)}**",
        prose(f.message),
        f"<sub>{place}</sub>" if place else "",
    ]
    return fit("\n\n".join(p for p in parts if p), MAX_COMMENT_CHARS)


def suggestion_block(s: Suggestion) -> str:
    """GitHub's suggested change: the replacement lines in a ```suggestion fence, longer than any
    backtick run they hold so that none closes it."""
    fence = "`" * max((len(run) + 1 for run in re.findall("`{3,}", s.replacement)), default=3)
    return f"{fence}suggestion\n{s.replacement}{fence}"


def _suggested(f: Finding, changed: frozenset[int]) -> Suggestion | None:
    """The finding's verified suggestion, when every line it replaces is in the PR's diff (GitHub
    refuses a suggestion elsewhere, and the whole review with it)."""
    s = f.suggestion
    if s is None or s.path != f.path or not set(range(s.start_line, s.line + 1)) <= changed:
        return None
    return replace(s, verified_on=())  # the same edit, wherever it was proven


def _anchor(f: Finding, changed: frozenset[int]) -> tuple[int, Suggestion | None] | None:
    """The line a finding's comment sits on (a suggestion's last line, else its own), where the
    PR changed it; None elsewhere (the summary and the check run say it)."""
    s = _suggested(f, changed)
    if s is not None:
        return s.line, s
    return (f.line, None) if f.line and f.line in changed else None


def inline_key(f: Finding) -> str:
    """What one inline comment is for: a check's rule, on one line."""
    return f"{f.check}/{f.rule}" if f.rule else f.check


def inline_marker(key: str) -> str:
    return INLINE_MARKER.format(key=key)


def _profiles(f: Finding) -> list[str]:
    named = f.data.get("profiles")
    if isinstance(named, list) and named:
        return [str(p) for p in named]
    return [f.profile] if f.profile else []


def _grouped_body(group: Sequence[Finding], s: Suggestion | None) -> str:
    """The first finding's words (with every profile of the group), the others' titles where they
    are about another object, then the suggested change when it is the same for all of them."""
    first = group[0]
    profiles = list(dict.fromkeys(p for f in group for p in _profiles(f)))
    others = [f"- {inline(f.title)}" for f in group[1:] if f.subject != first.subject]
    head = "\n\n".join(
        [inline_marker(inline_key(first)) + inline_body(first, profiles), *others[:1]]
    )
    if len(others) > 1:
        head = "\n".join([head, *others[1:]])
    if s is None:
        return fit(head, MAX_COMMENT_CHARS)
    body = fit(f"{head}\n\n{suggestion_block(s)}", MAX_COMMENT_CHARS)
    return body if body.endswith(suggestion_block(s)) else fit(head, MAX_COMMENT_CHARS)


def _common_suggestion(group: Sequence[Finding], changed: frozenset[int]) -> Suggestion | None:
    """The suggestion every finding of the group offers alike; None when one offers none or
    another (committing it would fix some of them only)."""
    found = [_suggested(f, changed) for f in group]
    first = found[0]
    return first if first is not None and all(s == first for s in found) else None


def _groups(
    report: Report, changed_lines: Mapping[str, frozenset[int]]
) -> dict[tuple[str, int, str], list[Finding]]:
    """The failures and warnings on changed lines, by the line and rule of their comment."""
    groups: dict[tuple[str, int, str], list[Finding]] = {}
    for f in report.findings:
        if f.severity is Severity.NOTICE or not f.path:
            continue
        at = _anchor(f, changed_lines.get(f.path, frozenset()))
        if at is not None:
            groups.setdefault((f.path, at[0], inline_key(f)), []).append(f)
    return groups


def has_inline(report: Report, changed_lines: Mapping[str, frozenset[int]]) -> bool:
    """Whether any finding gets an inline comment: if none does, the comments posted before need
    not be read (a plan edits only the comments of its own lines and rules)."""
    return bool(_groups(report, changed_lines))


def inline_plan(
    report: Report,
    changed_lines: Mapping[str, frozenset[int]],
    posted: Iterable[PostedComment],
) -> InlinePlan:
    """One comment per line and rule for the failures and warnings on lines the PR added or
    changed at head (elsewhere a finding is an annotation); a comment already posted for the same
    line and rule is edited when its words changed, never posted again."""
    groups = _groups(report, changed_lines)
    mine = {_posted_key(c): c for c in posted}
    bodies = {c.body for c in mine.values()}
    new: list[InlineComment] = []
    edits: list[tuple[int, str]] = []
    for (path, line, key), group in groups.items():
        changed = changed_lines.get(path, frozenset())
        s = _common_suggestion(group, changed)
        body = _grouped_body(group, s)
        start = (
            s.start_line if s is not None and s.start_line != s.line and s.line == line else None
        )
        before = mine.get((path, line, key))
        if before is not None:
            if before.body != body:
                edits.append((before.id, body))
        elif body not in bodies:
            new.append(InlineComment(path, line, body, start))
    return InlinePlan(tuple(new), tuple(edits))


def _posted_key(c: PostedComment) -> tuple[str, int | None, str | None]:
    found = INLINE_MARKER_RE.search(c.body)
    return c.path, c.line, found["key"] if found else None


def inline_comments(
    report: Report,
    changed_lines: Mapping[str, frozenset[int]],
    posted: Iterable[PostedComment],
) -> list[InlineComment]:
    """The comments `inline_plan` would post (its edits aside)."""
    return list(inline_plan(report, changed_lines, posted).new)
