"""Other open PRs' renders of the charts under review, for the duplicates check: two PRs that reach
the same rendered change with different text (one edits values.yaml, the other the template) are
duplicates too, which no comparison of their diffs can tell.

Cheap first, since a mirror may hold hundreds of open PRs:
- only the PRs whose head changed a chart under review since their fork point (the chart
  directory's tree id at both, read in one batch for every PR), in a way that can change the
  render of a profile this PR changes (a profile's own values file reaches only that profile);
- at most MAX_OTHER_PRS of them, lowest-numbered first: GitHub numbers PRs in the order they are
  opened, and the older PR is the one a newer one is likely to duplicate (branches without a
  number come last);
- only the profiles on which this PR changes something rendered: elsewhere no change can be shared;
- of those, only the ones where the text the other PR changed could render one of this PR's
  changes the same way (bot/charts/duplicate_evidence.py): a PR whose text rules out every one is
  compared without a render (its chart comes back with no renders, so a hunk it shares still
  reads as rendering differently, as its render would have shown).
The other head is rendered against this review's base, so both changes are measured from one base
(whose renders are the review's own, from the cache); lint is off.

Another PR's hostile tree costs its own review, not this one: before it takes a place, its chart
gets the same bounded pre-check as this PR's (`checked_charts`, remembered by tree id). A refused
one is not rendered and takes no place: it comes back as its chart with no renders and the reason
under `refused`, which the duplicates check says and leaves out of the comparison. Past
MAX_OTHER_PRS refusals no further PR is looked at, so a flood of them costs a bounded amount."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial

from bot.charts.dependencies import DependencyError
from bot.charts.duplicate_evidence import ChartEvidence, changed_text, chart_evidence
from bot.charts.renders import (
    ChartSource,
    PendingChart,
    RenderSettings,
    checked_charts,
    render_in_order,
    start_chart,
)
from bot.git.objects import GitReader
from bot.git.subtree import Subtree
from bot.git.tree import GitTree
from bot.model.chart_files import BUMP_LINE_RE, chart_file
from bot.model.config import DiffConfig
from bot.model.context import ChartRenders, OpenPR
from bot.model.rendered_diff import CHANGED, profile_diff
from bot.textlines import git_lines

MAX_OTHER_PRS = 5
VALUES_FILE = "values.yaml"  # the chart's defaults, which every profile renders with
# A `Chart.yaml` line giving the chart's version or its app's: what two PRs taking the same
# version share without making the same change (checks/duplicates/hunks.py reads it too).
VERSION_LINE = BUMP_LINE_RE

# head sha -> its renders of the charts under review it touches
OtherRenders = Mapping[str, tuple[ChartRenders, ...]]


def other_renders(
    repo: GitReader,
    target: str,
    prs: Sequence[OpenPR],
    charts: Sequence[ChartRenders],
    base: GitTree,
    settings: RenderSettings,
    head: str,
) -> OtherRenders:
    """The renders of the first MAX_OTHER_PRS open PRs whose change to one of `charts` can change
    what this PR changes, by head sha."""
    if not prs or not charts:
        return {}
    changed = {c.path: changed_profiles(c, settings.config.diff) for c in charts}
    wanted = [c for c in charts if changed[c.path]]
    found, refused = candidates(repo, target, prs, wanted, changed)
    jobs, judged = telling_jobs(repo, found, wanted, changed, base, head, settings.config.diff)
    objects = {c.path: changed_objects(c, changed[c.path], settings.config.diff) for c in wanted}
    templates = {path: _templates(mine) for path, mine in objects.items()}

    def start(head: str, path: str, profiles: tuple[str, ...], parse_all: bool) -> PendingChart:
        only = None if parse_all else templates[path]
        narrowed = replace(settings, only=profiles, lint=False, parse_only=only)
        return start_chart(ChartSource(path, base, repo.tree(head)), narrowed)

    starts = (partial(start, head, path, profiles, False) for head, path, profiles in jobs)
    renders: dict[str, list[ChartRenders]] = {
        pr.head: [ChartRenders(path, path.rsplit("/", 1)[-1], {}, {}, refused={"head": why})]
        for pr, path, why in refused
    }
    for other, path in judged:  # compared without a render: nothing of theirs can be the same
        renders.setdefault(other, []).append(ChartRenders(path, path.rsplit("/", 1)[-1], {}, {}))
    in_order = render_in_order(starts, settings.pools.sizes.charts_ahead)
    for (head, path, profiles), chart in zip(jobs, in_order, strict=True):
        if not _found_all(chart, objects[path]):
            # An object this PR changed is not in the templates that hold it here: the other
            # head moved or removed it. Parsed whole (the render is the cache's), as it always was.
            chart = start(head, path, profiles, True).result()
        renders.setdefault(head, []).append(chart)
    return {head: tuple(found) for head, found in renders.items()}


def telling_jobs(
    repo: GitReader,
    found: Sequence[tuple[OpenPR, Mapping[str, tuple[str, ...]]]],
    charts: Sequence[ChartRenders],
    changed: Mapping[str, tuple[str, ...]],
    base: GitTree,
    head: str,
    noise: DiffConfig,
) -> tuple[list[tuple[str, str, tuple[str, ...]]], list[tuple[str, str]]]:
    """Each candidate's renders, on only the profiles where the text it changed could render one
    of this PR's changes the same way (bot/charts/duplicate_evidence.py); and the (head, chart)
    pairs the text alone rules out, compared without a render."""
    by_path = {c.path: c for c in charts}
    evidence: dict[str, ChartEvidence | None] = {}
    jobs, judged = [], []
    for pr, shared in found:
        for path, profiles in shared.items():
            if path not in evidence:
                mine = by_path[path]
                evidence[path] = chart_evidence(repo, mine, changed[path], base, head, noise)
            known = evidence[path]
            telling = (
                profiles
                if known is None
                else known.telling(profiles, changed_text(repo, path, base, pr.head))
            )
            if telling:
                jobs.append((pr.head, path, telling))
            else:
                judged.append((pr.head, path))
    return jobs, judged


# Per profile, the objects this PR changes: their keys and the templates holding them at base or
# head (repository paths).
ChangedObjects = Mapping[str, tuple[frozenset[str], frozenset[str]]]


def changed_objects(
    chart: ChartRenders, profiles: Sequence[str], noise: DiffConfig
) -> ChangedObjects:
    """What of another head the duplicates check can compare with this PR's change: the objects
    this PR changes on each of `profiles`, and where they are rendered from."""
    found = {}
    for name in profiles:
        keys = frozenset(
            o.key for o in profile_diff(name, chart.base[name], chart.head[name], noise).objects
        )
        docs = (*chart.base[name].documents, *chart.head[name].documents)
        found[name] = (keys, frozenset(d.template for d in docs if d.key in keys))
    return found


def _templates(objects: ChangedObjects) -> frozenset[str]:
    return frozenset(t for _, templates in objects.values() for t in templates)


def _found_all(chart: ChartRenders, objects: ChangedObjects) -> bool:
    """Whether each profile's render at the other head holds every object this PR changes (or
    failed, which the duplicates check leaves alone)."""
    for name, (keys, _) in objects.items():
        render = chart.head.get(name)
        if render is None or render.error is not None:
            continue
        if not keys <= {d.key for d in render.documents}:
            return False
    return True


# An open PR whose tree the pre-check refused: the PR, the chart, why.
Refused = tuple[OpenPR, str, str]


def candidates(
    repo: GitReader,
    target: str,
    prs: Sequence[OpenPR],
    charts: Sequence[ChartRenders],
    changed: Mapping[str, tuple[str, ...]],
) -> tuple[list[tuple[OpenPR, dict[str, tuple[str, ...]]]], list[Refused]]:
    """The first MAX_OTHER_PRS PRs, in `review_order`, whose change since they forked from
    `target` can change the render of a profile in `changed` (chart → the profiles this PR
    changes): each with those charts and profiles. Merged PRs and unrelated histories are left
    out; so are PRs whose chart tree the pre-check refuses, returned apart."""
    if not charts:
        return [], []
    ordered = sorted(prs, key=review_order)
    points = repo.fork_points(target, [pr.head for pr in ordered])
    forked = [
        (pr, point.merge_base)
        for pr in ordered
        if not (point := points[pr.head]).contained and point.merge_base
    ]
    commits = list(dict.fromkeys(c for pr, base in forked for c in (pr.head, base) if c))
    trees = {c.path: repo.subtrees(c.path, commits) for c in charts} if commits else {}
    found, refused = [], []
    for pr, fork in forked:
        assert fork is not None  # filtered above
        reach = {c.path: affected(trees[c.path][fork], trees[c.path][pr.head], c) for c in charts}
        shared = {
            path: tuple(p for p in changed[path] if profiles is None or p in profiles)
            for path, profiles in reach.items()
        }
        shared = {path: profiles for path, profiles in shared.items() if profiles}
        why = next(((p, w) for p in shared if (w := refusal(repo, pr.head, p))), None)
        if why is not None:
            refused.append((pr, *why))
        elif shared:
            found.append((pr, shared))
        if MAX_OTHER_PRS in (len(found), len(refused)):
            break
    return found, refused


def refusal(repo: GitReader, head: str, chart: str) -> str | None:
    """Why the pre-check refuses the chart's tree at `head` (bot/charts/renders.py), or None;
    a dependency that cannot be resolved is the render's to say."""
    try:
        return checked_charts(repo.tree(head), chart)[1]
    except DependencyError:
        return None


def affected(before: Subtree, after: Subtree, chart: ChartRenders) -> frozenset[str] | None:
    """The profiles whose render a change of the chart's files from `before` to `after` can
    change; None: any. A profile's own values file reaches only the profiles it serves (the
    chart's `values.yaml` reaches all), and a `Chart.yaml` moving only `version`/`appVersion`
    changes no render but by the version strings, which are no duplicate."""
    if before.tree_id == after.tree_id:
        return frozenset()
    serves: dict[str, set[str]] = {}
    for name, spec in chart.profiles.items():
        if spec.values_file and spec.values_file != f"{chart.path}/{VALUES_FILE}":
            serves.setdefault(spec.values_file, set()).add(name)
    reached: set[str] = set()
    for path in after.changed_since(before.tree_id):
        if path in serves:
            reached |= serves[path]
        elif path != chart_file(chart.path) or not versions_only(before, after, path):
            return None
    return frozenset(reached)


def versions_only(before: Subtree, after: Subtree, path: str) -> bool:
    old, new = git_lines(before.text(path) or ""), git_lines(after.text(path) or "")
    if len(old) != len(new):
        return False
    return all(
        a == b or bool(VERSION_LINE.match(a) and VERSION_LINE.match(b))
        for a, b in zip(old, new, strict=True)
    )


def review_order(pr: OpenPR) -> tuple[bool, int, str, str]:
    return (not pr.number, pr.number, pr.ref, pr.head)


def changed_profiles(chart: ChartRenders, noise: DiffConfig) -> tuple[str, ...]:
    """The profiles on which the PR changes some object beyond the diff's noise."""
    both = sorted(set(chart.base) & set(chart.head))
    return tuple(
        p for p in both if profile_diff(p, chart.base[p], chart.head[p], noise).status == CHANGED
    )
