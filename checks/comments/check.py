"""The `comments` check: a comment the PR made false. When the PR changes a field of a rendered
workload (a probe's handler or port, a containerPort, `runAsUser`/`runAsGroup`/`fsGroup`, a
resources value, the update strategy) and a `#` or `{{/* */}}` comment in the block of its template
that defines that workload or container still names the old value and not the new one, the comment
now explains something that is no longer there: a notice on the comment's line, naming the line
that changed. Reviewers ask that "a change which falsifies a statement fixes it in place".

Precision first, so only exact tokens: the old value as a whole word (`tcpSocket`, `8080`,
`Recreate`), never a paraphrase ("TCP connect"). A number is common, so it counts only in a
comment that names the field (`runAsUser`) or sits right above, or on, a line that writes it or
the container's `- name:`. Never reported: a comment the PR itself wrote (not there at base), one
naming the new value too, and one whose old value the block still renders elsewhere (another probe
still on `tcpSocket`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, NamedTuple

from bot.model.check import Check
from bot.model.context import ChartContext
from bot.model.report import Finding, Severity
from checks.comments.fields import FieldChange, changes
from checks.comments.lines import (
    Comment,
    Span,
    comments,
    container_span,
    field_lines,
    workload_span,
)
from checks.kit.template_lines import ListItem, container_items

NAME = "comments"
STALE = "stale-comment"
SEVERITY = Severity.NOTICE
TITLE = "{path} line {line}: the comment still says {old}, now {new}"
MESSAGE = (
    "profile{s} {profiles}: {subject}: the PR changed the {what}{of} from {old} to {new} "
    "(line {changed}), but the comment on line {line} still says {old}: “{comment}”. "
    "Say {new} there, or why {old} still holds."
)


class _Stale(NamedTuple):
    change: FieldChange
    comment: Comment
    changed_line: int


def run(ctx: ChartContext) -> list[Finding]:
    chart = ctx.chart
    groups: dict[tuple[Any, ...], tuple[_Stale, list[str]]] = {}
    # Each template's text and comments, read once: profiles make the same change in it.
    read: dict[str, _Template | None] = {}
    for profile, head in sorted(chart.head.items()):
        base = chart.base.get(profile)
        if base is None or base.error is not None or head.error is not None:
            continue
        for change in changes(base.documents, head.documents):
            for stale in _stale(ctx, change, head.documents, read):
                key = (stale.comment.line, change.template, change.subject, change.keys, change.old)
                groups.setdefault(key, (stale, []))[1].append(profile)
    return [_finding(chart.path, stale, profiles) for stale, profiles in groups.values()]


def _stale(
    ctx: ChartContext,
    change: FieldChange,
    docs: tuple[Any, ...],
    read: dict[str, _Template | None],
) -> Iterator[_Stale]:
    if _still_rendered(change, docs):
        return
    if change.template not in read:
        source = ctx.head.text(change.template)
        read[change.template] = (
            _Template(source, comments(source), container_items(source)) if source else None
        )
    template = read[change.template]
    if template is None:
        return
    source, notes = template.source, template.notes
    span = _span(template, change)
    if span is None:
        return
    written = field_lines(source, span, change.keys)
    if not written:
        return
    written_by_pr = _own_comments(ctx, change.template)
    before = _base_comments(ctx, change.template) if written_by_pr else set()
    for number in range(span.start, span.end + 1):
        note = notes.get(number)
        if note is None or not _names(note.text, change.old):
            continue
        if number in written_by_pr and note.text not in before:
            continue  # the PR wrote this comment: what it says is deliberate
        if _names(note.text, change.new):
            continue
        anchors = [span.opener, *written] if span.opener else written
        if change.old[0].isdigit() and not _near(note, notes, anchors, change.keys[-1]):
            continue
        yield _Stale(change, note, written[-1])


def _own_comments(ctx: ChartContext, template: str) -> frozenset[int]:
    touched = ctx.changed(template)
    return touched.added_lines if touched is not None else frozenset()


def _base_comments(ctx: ChartContext, template: str) -> set[str]:
    """The comments the template had at base: a line the PR changed keeps its comment (a value
    edited in front of a trailing comment, a block re-indented) when the text was there before."""
    source = ctx.base.text(template)
    return {note.text for note in comments(source).values()} if source else set()


class _Template(NamedTuple):
    source: str
    notes: dict[int, Comment]
    items: list[ListItem]


def _span(template: _Template, change: FieldChange) -> Span | None:
    if change.container is None:
        return workload_span(template.source, change.subject.split("/", 1)[0])
    container = change.container
    return container_span(
        template.source, template.notes, container.name, container.role, template.items
    )


def _still_rendered(change: FieldChange, docs: tuple[Any, ...]) -> bool:
    """Whether the old value is still a key or value of the container (or workload) at head."""
    if change.container is not None:
        return change.old in _tokens(change.container.body)
    doc = next((d for d in docs if d.key == change.subject), None)
    return doc is not None and change.old in _tokens(doc.body)


def _tokens(node: Any) -> set[str]:
    found: set[str] = set()
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, Mapping):
            found.update(str(k) for k in item)
            todo += item.values()
        elif isinstance(item, list):
            todo += item
        elif item is not None and not isinstance(item, bool):
            found.add(str(item))
    return found


def _near(note: Comment, notes: dict[int, Comment], anchors: list[int], key: str) -> bool:
    """A number's comment names the field, or is attached to the container's `- name:` line or a
    line of the field's key chain: on it, or in the run of whole-line comments right above it."""
    if _names(note.text, key):
        return True
    for line in anchors:
        if note.line == line or (
            note.line < line
            and all(n in notes and notes[n].whole_line for n in range(note.line, line))
        ):
            return True
    return False


def _names(text: str, token: str) -> bool:
    return _token_rx(token).search(text) is not None


@cache
def _token_rx(token: str) -> re.Pattern[str]:
    # A whole token: not inside a longer word or number (`8080` is not in `18080` or `8080.5`),
    # while `:8080` and `(8080)` still name it.
    return re.compile(rf"(?<![\w.-]){re.escape(token)}(?![\w-]|\.\d)")


def _finding(chart: str, stale: _Stale, profiles: list[str]) -> Finding:
    change, note = stale.change, stale.comment
    fmt = {
        "path": change.template,
        "line": note.line,
        "old": change.old,
        "new": change.new,
        "changed": stale.changed_line,
    }
    who = f" of {change.container.who}" if change.container is not None else ""
    message = MESSAGE.format(
        s="s" if len(profiles) > 1 else "",
        profiles=", ".join(profiles),
        subject=change.subject,
        what=change.what,
        of=who,
        comment=note.text,
        **fmt,
    )
    return Finding(
        check=NAME,
        severity=SEVERITY,
        rule=STALE,
        title=TITLE.format(**fmt),
        message=message,
        chart=chart,
        profile=", ".join(profiles),
        subject=change.subject,
        path=change.template,
        line=note.line,
        data={
            "comment_line": note.line,
            "changed_line": stale.changed_line,
            "field": change.what,
            "container": change.container.name if change.container is not None else None,
            "old": change.old,
            "new": change.new,
            "profiles": profiles,
        },
    )


CHECK = Check(NAME, "Comments the change made false", run, "chart")
