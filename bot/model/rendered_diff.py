"""The rendered diff: what a PR changes in a chart's manifests, per profile and object by object, as
helm-diff and argocd-diff-preview show it, with what every release changes left out.

Pure: two renders in, values out. The engine puts `rendered_diffs(chart, config.diff)` in the
chart's report data under `diff`, so the JSON report holds it whole; bot/report/diff_section.py
prints it for people.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# difflib's algorithm to the line, compiled: the stdlib's matcher is pure Python, and a CRD whose
# descriptions a release reworded kept this process busy for ~1 s of a 200-change replay while the
# render processes waited on it (tests/engine/test_rendered_diff.py holds it to the stdlib's).
from cydifflib import unified_diff

from bot.lru import IdentitiesMemo, WeakIdentityMemo
from bot.model.config import DiffConfig
from bot.model.context import ChartRenders, Rendered
from bot.model.diff_noise import alike, comparable
from bot.model.manifests import Document
from bot.model.random_names import random_pairs
from bot.model.yaml.dump import dump_lines

log = logging.getLogger(__name__)

CHANGED, UNCHANGED, ADDED, REMOVED, NOT_COMPARED = (
    "changed",
    "unchanged",
    "added",
    "removed",
    "not-compared",
)
ABSENT = "/dev/null"  # the side of an object the PR creates or deletes, as git names it
CONTEXT_LINES = 3
HUNK = "@@"
# An object whose YAML is longer than this on either side is not diffed line by line: difflib is
# quadratic at worst, and such a diff is no read for a reviewer anyway (a dashboard's JSON).
MAX_OBJECT_LINES = 20_000
TOO_LARGE = "# {key}: changed, {lines:,} lines: too large to diff here\n"
TOO_DEEP = "# {key}: nested too deeply to diff here\n"


@dataclass(frozen=True)
class ObjectDiff:
    key: str  # Kind/namespace/name
    text: str  # a unified diff, its `---` / `+++` lines naming the object


@dataclass(frozen=True)
class ProfileDiff:
    profile: str
    status: str  # CHANGED, UNCHANGED, ADDED, REMOVED or NOT_COMPARED
    objects: tuple[ObjectDiff, ...] = ()
    note: str = ""  # why it was not compared

    @property
    def text(self) -> str:
        return "".join(o.text for o in self.objects)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "status": self.status,
            "objects": [{"object": o.key, "diff": o.text} for o in self.objects],
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProfileDiff:
        objects = tuple(ObjectDiff(o["object"], o["diff"]) for o in data.get("objects", ()))
        return cls(data["profile"], data["status"], objects, data.get("note", ""))


@dataclass(frozen=True)
class ChartDiff:
    chart: str
    profiles: tuple[ProfileDiff, ...]

    @property
    def changed(self) -> bool:
        return any(p.status == CHANGED for p in self.profiles)


def rendered_diffs(chart: ChartRenders, noise: DiffConfig) -> dict[str, Any]:
    """The chart's report data: `{"diff": {"profiles": [...]}}`, one entry per profile."""
    names = sorted(set(chart.base) | set(chart.head))
    diffs = [_contained(p, chart.base.get(p), chart.head.get(p), noise) for p in names]
    return {"diff": {"profiles": [d.to_json() for d in diffs]}}


def _contained(
    profile: str, base: Rendered | None, head: Rendered | None, noise: DiffConfig
) -> ProfileDiff:
    """A diff that fails (a bug, or a render crafted past a limit) costs that profile's diff only,
    said in its line: the review and its findings do not depend on it."""
    try:
        return profile_diff(profile, base, head, noise)
    except Exception as exc:  # noqa: BLE001 - the diff is for reading; it must not end the review
        log.exception("rendered diff of profile %s failed", profile)
        return ProfileDiff(profile, NOT_COMPARED, note=f"the diff failed: {type(exc).__name__}")


def chart_diff(path: str, extra: Mapping[str, Any]) -> ChartDiff | None:
    """A chart's diff back from its report data; None when the review computed none."""
    data = extra.get("diff")
    if not isinstance(data, Mapping):
        return None
    return ChartDiff(path, tuple(ProfileDiff.from_json(p) for p in data.get("profiles", ())))


def profile_diff(
    profile: str, base: Rendered | None, head: Rendered | None, noise: DiffConfig
) -> ProfileDiff:
    """The profile's diff; asked three times a review (the report, and twice by the duplicates
    check), made once for each pair of renders while they live."""
    if base is None or head is None:
        return _profile_diff(profile, base, head, noise)
    return _DIFFS.get_or_make(
        (base, head), (profile, _rules(noise)), lambda: _profile_diff(profile, base, head, noise)
    )


def _rules(noise: DiffConfig) -> tuple[tuple[str, ...], ...]:
    return tuple(noise.ignore_labels), tuple(noise.ignore_annotations), tuple(noise.ignore_fields)


_DIFFS: WeakIdentityMemo[ProfileDiff] = WeakIdentityMemo()
# An object's diff by its two parsed bodies: a CRD renders the same text at every profile (and so
# parses into the same objects), and its diff, difflib over thousands of lines, was made again
# for each. Each entry holds both bodies, so no other object can take their ids meanwhile.
_PAIRS: IdentitiesMemo[ObjectDiff | None] = IdentitiesMemo(128)


# What every release changes, whatever a repository's `diff:` config says: the labels naming the
# chart's and the app's version, checksum annotations, a generated CA. The defaults of DiffConfig.
RELEASE_NOISE = DiffConfig()


def renders_alike(base: Rendered, head: Rendered, noise: DiffConfig = RELEASE_NOISE) -> bool:
    """Both rendered, into the same objects but for `noise`: what the diff calls unchanged, told
    without a dump (where `alike` cannot tell, an object counts as changed: the caller then does
    the work it would have skipped, never the reverse)."""
    if base.error is not None or head.error is not None:
        return False
    old, new = _by_key(base.documents), _by_key(head.documents)
    if old.keys() != new.keys():
        return False
    return all(alike(a, new[key], noise) for key, a in old.items())


def _profile_diff(
    profile: str, base: Rendered | None, head: Rendered | None, noise: DiffConfig
) -> ProfileDiff:
    if base is None:
        return ProfileDiff(profile, ADDED)
    if head is None:
        return ProfileDiff(profile, REMOVED)
    for side, render in (("base", base), ("head", head)):
        if render.error is not None:
            return ProfileDiff(profile, NOT_COMPARED, note=f"it did not render at {side}")
    objects = tuple(_object_diffs(base.documents, head.documents, noise))
    return ProfileDiff(profile, CHANGED if objects else UNCHANGED, objects)


def _object_diffs(
    base: Sequence[Document], head: Sequence[Document], noise: DiffConfig
) -> Iterable[ObjectDiff]:
    old, new = _by_key(base), _by_key(head)
    gone = {k: d for k, d in old.items() if k not in new}
    came = {k: d for k, d in new.items() if k not in old}
    renamed = random_pairs(gone, came) if gone and came else {}
    paired = set(renamed.values())
    for key in sorted(set(old) | set(new)):
        if key in paired:
            continue  # said with the object it was at base
        a, b = old.get(key), new.get(key)
        if key in renamed:
            b = new[renamed[key]]
            found = _object_diff(renamed[key], a, b, noise, old_name=a.name if a else None)
        elif a is None or b is None:
            found = _object_diff(key, a, b, noise)
        elif alike(a, b, noise):
            continue  # most objects: no copy, no dump
        else:
            found = _PAIRS.get_or_make(
                (a.body, b.body),
                (key, a.kind, b.kind, _rules(noise)),
                functools.partial(_object_diff, key, a, b, noise),
            )
        if found is not None:
            yield found


def _same(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Equal as the diff would show them. `==` alone is not: `1 == 1.0 == True`, where the YAML
    reads `1`, `1.0` and `true`; the reprs tell those apart (keys in another order then read as
    different here, and the dump, which sorts keys, finds them equal)."""
    try:
        return a is b or (a == b and repr(a) == repr(b))
    except RecursionError:
        return False  # then dumped, which says it is too deep


def _by_key(documents: Sequence[Document]) -> dict[str, Document]:
    """Documents by key; a key rendered twice (a chart bug Helm lets through) is told apart by
    its rank, so neither copy hides the other."""
    out: dict[str, Document] = {}
    for doc in documents:
        key, n = doc.key, 1
        while key in out:
            n += 1
            key = f"{doc.key} #{n}"
        out[key] = doc
    return out


def _object_diff(
    key: str,
    base: Document | None,
    head: Document | None,
    noise: DiffConfig,
    old_name: str | None = None,
) -> ObjectDiff | None:
    """The object's diff; with `old_name`, the base object is the head's under a name the chart
    draws at random in each render (bot/model/random_names.py): compared as if it had the head's."""
    try:
        old_body, new_body = comparable(base, noise), comparable(head, noise)
        if _same(old_body, new_body):
            # Only noise differed: most objects of a version bump (`helm.sh/chart`), told without
            # the dump, which costs 10x the comparison.
            return None
        old, new = _dump(old_body), _dump(new_body)
        if old_name is not None and head is not None:
            old = [line.replace(old_name, head.name) for line in old]
    except RecursionError:  # nesting Helm and the YAML parser allow, deeper than Python's stack
        return ObjectDiff(key, TOO_DEEP.format(key=key))
    if old == new:
        return None  # keys in another order, or Secret values the redaction hides
    if max(len(old), len(new)) > MAX_OBJECT_LINES:
        return ObjectDiff(key, TOO_LARGE.format(key=key, lines=max(len(old), len(new))))
    lines = _unified(
        old,
        new,
        fromfile=f"a/{key}" if base is not None else ABSENT,
        tofile=f"b/{key}" if head is not None else ABSENT,
    )
    return ObjectDiff(key, "".join(_line(line) for line in lines))


def _unified(old: Sequence[str], new: Sequence[str], fromfile: str, tofile: str) -> Iterable[str]:
    """difflib's unified diff (cydifflib's, the same) of what lies between the lines both sides
    start and end with, and their context: difflib matches every line against every other (a CRD's
    13,000 lines, where a release changed a few descriptions), and the lines alike at both ends
    cannot be in a hunk. Hunk headers are dropped (_line), so the lines left out change no line of
    the diff."""
    ahead = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        ahead += 1
    behind = 0
    for a, b in zip(reversed(old[ahead:]), reversed(new[ahead:]), strict=False):
        if a != b:
            break
        behind += 1
    start = max(0, ahead - CONTEXT_LINES)
    keep = max(0, behind - CONTEXT_LINES)
    return unified_diff(
        old[start : len(old) - keep],
        new[start : len(new) - keep],
        fromfile=fromfile,
        tofile=tofile,
        n=CONTEXT_LINES,
    )


def _line(line: str) -> str:
    """A diff line ended by a newline; a hunk's header without its line numbers, which count lines
    of our YAML dump, no file a reviewer has, and differ between profiles that make the same
    change (the same diff then reads as one)."""
    if line.startswith("@@ "):
        return HUNK + "\n"
    return line if line.endswith("\n") else line + "\n"


def _dump(body: Mapping[str, Any] | None) -> list[str]:
    # Large objects' lines are remembered block by block, by identity, in the dump itself
    # (bot/model/yaml/dump.py): a CRD's next version is mostly lines written before.
    return dump_lines(body) if body is not None else []
