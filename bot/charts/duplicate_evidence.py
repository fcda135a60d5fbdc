"""Whether another open PR's render could show the same change as this PR's, told from text alone:
the cheap evidence that decides whether (and on which profiles) bot/charts/other_renders.py renders
it for the duplicates check.

Every character of a render comes from the chart's files (templates and values) or from what Helm
computes (names, hashes, encodings). So a fragment of text that this PR typed into the chart, that
no file of the chart held at base, and that shows in an object's rendered change, reaches another
PR's render of that object only through a file the other PR changed. Where one of this PR's
changed objects holds such fragments and the other PR's changed files hold none of them, the
other PR cannot render that object changed the same way, and a profile whose changed objects are
all so is not rendered for it. What Helm computes (a checksum, a base64 value) is never such a
fragment: this PR did not type it. The evidence is no proof against a PR that assembles one of
those fragments from smaller pieces in a template (`{{ printf "%s%s" "ab" "cd" }}` for `abcd`);
the renders it spares are most of a review's Helm work where many PRs touch one chart.

A chart with a vendored subchart archive has text no file shows: no evidence, every profile."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.git.objects import GitReader
from bot.git.tree import GitTree
from bot.model.chart_files import is_vendored_archive
from bot.model.config import DiffConfig
from bot.model.context import ChartRenders
from bot.model.rendered_diff import CHANGED, profile_diff
from bot.textlines import git_lines

# What a rendered line is cut into: YAML's own punctuation and spaces. Shorter pieces are in every
# chart, so they are no evidence either way.
_PIECES_RE = re.compile(r"[\s:\"'{}\[\],|>#]+")
MIN_FRAGMENT = 4
_DIFF_START = "--- "  # an object diff proper (not "too large to diff")


@dataclass(frozen=True)
class ChartEvidence:
    """Per profile, the fragments each changed object's rendered change needs (an empty set: it
    needs none this PR typed, so any PR reaching the profile may render it so)."""

    needs: Mapping[str, tuple[frozenset[str], ...]]

    def telling(self, profiles: Sequence[str], theirs: str) -> tuple[str, ...]:
        """The profiles on which a PR whose changed files read `theirs` could render one of this
        PR's changes the same way."""
        return tuple(
            p
            for p in profiles
            if any(all(f in theirs for f in needed) for needed in self.needs.get(p, ((),)))
        )


def chart_evidence(
    repo: GitReader,
    chart: ChartRenders,
    profiles: Sequence[str],
    base: GitTree,
    head: str,
    noise: DiffConfig,
) -> ChartEvidence | None:
    """The fragments of this PR's change to `chart` on `profiles` (its head: `head`); None where
    there can be no evidence (a vendored archive at base)."""
    base_paths = base.paths(chart.path)
    if any(is_vendored_archive(p, chart.path) for p in base_paths):
        return None
    at_base = _joined(base, base_paths)
    typed = changed_text(repo, chart.path, base, head)
    needs = {}
    for name in profiles:
        diff = profile_diff(name, chart.base[name], chart.head[name], noise)
        if diff.status != CHANGED:
            continue
        needs[name] = tuple(
            frozenset(f for f in _fragments(o.text) if f in typed and f not in at_base)
            for o in diff.objects
            if o.text.startswith(_DIFF_START)
        )
    return ChartEvidence(needs)


def changed_text(repo: GitReader, chart: str, base: GitTree, head: str) -> str:
    """What the files of `chart` that differ between `base` and the commit `head` read at
    `head`, one after the other: measured from this review's base, as the other PR's render is."""
    at_head = repo.subtrees(chart, [head])[head]
    changed = at_head.changed_since(base.tree_id(chart))
    return "\n".join(at_head.text(p) or "" for p in changed)


def _joined(tree: GitTree, paths: Sequence[str]) -> str:
    return "\n".join(
        (data or b"").decode("utf-8", errors="replace") for data in tree.read_many(paths)
    )


def _fragments(diff: str) -> set[str]:
    """The pieces of the diff's added lines (past its `---`/`+++` header)."""
    found: set[str] = set()
    for line in git_lines(diff)[2:]:
        if line.startswith("+"):
            found.update(p for p in _PIECES_RE.split(line[1:]) if len(p) >= MIN_FRAGMENT)
    return found
