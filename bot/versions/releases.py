"""Whether a chart version is released, as of a commit of the integration branch: a version that is
not released yet needs no second bump, whatever changes join it before it ships.

Three records:

- the chart's own release tags (chart-releaser's `NAME-1.2.3`, and `NAME-v1.2.3`,
  `NAME-helm-chart-1.2.3`, `NAME/1.2.3`; in a repository of one chart also `v1.2.3` and `1.2.3`): a
  version is released where its tag points at the commit or one it contains;
- chart-releaser's `index.yaml` on its pages branch (`gh-pages`): a version is released once it
  has an entry (in a replay, one `created` by the time of the change replayed, so last year's
  change reads last year's releases); read only below MAX_INDEX_BYTES;
- without tags of its own, the repository's own release tags (`v0.0.242`, releasing every chart
  at once, as aws/eks-charts does): the chart's versions at the newest NEWEST_REPOSITORY_TAGS of
  those the commit contains are released.

A version is released where any of them says so; a repository that shows none of them for the
chart says nothing about what is released. Tags come
and go while a commit stays (a release tags the very commit develop is at): what is remembered is
keyed by the tags listed, never by the commit alone."""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from bot.git.objects import GitView
from bot.lru import BoundedCache
from bot.model.chart_files import read_chart_meta
from bot.versions.semver import parse_version

MAX_INDEX_BYTES = 32 * 1024 * 1024
INDEX_FILE = "index.yaml"
# What may stand between a chart's name and its version in its release tags.
TAG_MIDDLES = ("-", "-v", "-chart-", "-chart-v", "-helm-chart-", "-helm-chart-v", "/", "/v", "@")
SOLE_CHART_PREFIXES = ("v", "", "chart-", "chart-v", "helm-chart-", "helm-chart-v")
REPOSITORY_TAGS = ("refs/tags/v[0-9]*", "refs/tags/[0-9]*")
NEWEST_REPOSITORY_TAGS = 5
GLOB_CHARS_RE = re.compile(r"[*?\[\]\\]")
_INDEXES: BoundedCache[tuple[str, str], tuple[tuple[str, float], ...]] = BoundedCache(
    64, lambda entries: 1 + len(entries)
)
# (tip, chart directory, digest of the repository's release tags) → the versions they release.
_REPOSITORY_RELEASES: BoundedCache[tuple[str, str, str], tuple[str, frozenset[str]]] = BoundedCache(
    256
)


@runtime_checkable
class ReleaseRecords(GitView, Protocol):
    """The git reads this needs besides a `GitView`'s (`GitRepo` has them)."""

    def refs(self, *patterns: str, merged_into: str | None = None) -> dict[str, str]: ...

    def tag_commits(
        self, *patterns: str, merged_into: str | None = None, newest: int | None = None
    ) -> list[tuple[str, str]]: ...

    def object_sizes(self, names: list[str]) -> list[int | None]: ...

    def commit_dates(self, shas: list[str]) -> dict[str, int]: ...


@dataclass(frozen=True)
class ReleaseState:
    """Whether one version of a chart is released as of one commit; `source` None: the repository
    shows no release of the chart at all, so nothing can be said."""

    source: str | None = None  # "its release tags (`kong-…`)", "`gh-pages:index.yaml`", ...
    released: bool | None = None


UNKNOWN_STATE = ReleaseState()


def release_state(
    git: GitView,
    tip: str,
    chart_path: str,
    name: str,
    version: str | None,
    sole: bool,
    pages: str = "gh-pages",
    as_of: int | None = None,
) -> ReleaseState:
    """Whether `version` of chart `name` (at `chart_path`) is released as of commit `tip`;
    `sole`: the repository holds no other chart; `as_of`: the time of the review being replayed
    (seconds), None for now."""
    wanted = parse_version(version)
    if not isinstance(git, ReleaseRecords) or not name or GLOB_CHARS_RE.search(name):
        return UNKNOWN_STATE
    if wanted is None:
        return UNKNOWN_STATE
    target = str(wanted)
    tags = _chart_tags(git, name, sole)
    said: list[tuple[str, bool]] = []
    if tags:
        by_tag = any(v == target and git.is_ancestor(oid, tip) for v, oid in tags)
        said.append(("its release tags" if sole else f"its release tags (`{name}-…`)", by_tag))
    indexed = _indexed(git, name, pages, as_of)
    if indexed is not None:
        said.append((f"`{pages}:{INDEX_FILE}`", target in indexed))
    if not tags:
        by_repository = _by_repository_tags(git, tip, chart_path, target)
        if by_repository.source is not None:
            said.append((by_repository.source, bool(by_repository.released)))
    if not said:
        return UNKNOWN_STATE
    # Released where any record says so: an index regenerated wholesale dates every entry anew,
    # and a record that says "released" is never made up.
    return ReleaseState(" and ".join(s for s, _ in said), any(r for _, r in said))


def _chart_tags(git: ReleaseRecords, name: str, sole: bool) -> list[tuple[str, str]]:
    """(version, tag object) of each release tag of chart `name`, however recent."""
    patterns = [f"refs/tags/{name}-*", f"refs/tags/{name}/*", f"refs/tags/{name}@*"]
    if sole:
        patterns += [*REPOSITORY_TAGS, "refs/tags/chart-*", "refs/tags/helm-chart-*"]
    found = []
    for ref, oid in git.refs(*patterns).items():
        version = _tag_version(ref.removeprefix("refs/tags/"), name, sole)
        if version is not None:
            found.append((version, oid))
    return found


def _tag_version(tag: str, name: str, sole: bool) -> str | None:
    """The version a release tag of chart `name` names, or None for another chart's tag
    (`grafana-agent-1.0.0` is not chart grafana's)."""
    candidates = [name + middle for middle in TAG_MIDDLES]
    candidates += list(SOLE_CHART_PREFIXES) if sole else []
    for prefix in sorted(candidates, key=len, reverse=True):
        if tag.startswith(prefix):
            parsed = parse_version(tag[len(prefix) :])
            if parsed is not None:
                return str(parsed)
    return None


def _indexed(
    git: ReleaseRecords, name: str, pages: str, as_of: int | None
) -> frozenset[str] | None:
    """The chart's versions in the pages branch's index (created by `as_of`, when given); None
    where the index is absent, too large, or does not list the chart."""
    branch = git.resolve(pages) or git.resolve(f"origin/{pages}")
    if branch is None:
        return None
    [size] = git.object_sizes([f"{branch}:{INDEX_FILE}"])
    if size is None or size > MAX_INDEX_BYTES:
        return None
    entries = _INDEXES.get_or_make(
        (branch, name), lambda: _index_entries(git.tree(branch).text(INDEX_FILE) or "", name)
    )
    if not entries:
        return None
    return frozenset(
        str(parsed)
        for version, created in entries
        if (as_of is None or created <= as_of) and (parsed := parse_version(version)) is not None
    )


def _index_entries(text: str, name: str) -> tuple[tuple[str, float], ...]:
    """(version, created as seconds) of each entry of chart `name` in an index's text, read from
    the chart's block alone (an index holds every chart's every version: megabytes)."""
    block = _chart_block(text, name)
    if block is None:
        return ()
    entries, version, created = [], None, None
    dash: int | None = None  # where the list's own dashes stand (a dependency's sit deeper)
    for line in block.split("\n"):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if stripped.startswith("- ") and dash in (None, indent):
            if version is not None:
                entries.append((version, created or 0.0))
            version, created, dash = None, None, indent
            stripped, indent = stripped[2:].lstrip(" "), indent + 2
        if dash is None or indent != dash + 2:
            continue
        key, _, value = stripped.partition(":")
        if key == "version":
            version = value.strip().strip("'\"")
        elif key == "created":
            created = _timestamp(value.strip().strip("'\""))
    if version is not None:
        entries.append((version, created or 0.0))
    return tuple(entries)


def _chart_block(text: str, name: str) -> str | None:
    """The lines of `entries:` → `name:` (up to the next chart or top-level key), found by text
    search: one pass, however large the index."""
    entries = text.find("\nentries:")
    if entries < 0:
        return None
    for prefix in (f"\n  {name}:", f"\n  '{name}':", f'\n  "{name}":'):
        start = text.find(prefix + "\n", entries)
        if start >= 0:
            break
    else:
        return None
    body = text.index("\n", start + 1) + 1
    end = re.compile(r"\n(?:  )?[^\s-]").search(text, body)
    return text[body : end.start() if end else len(text)]


def _timestamp(value: str) -> float:
    """An index's RFC 3339 `created` as seconds (nanoseconds cut to what Python reads)."""
    value = re.sub(r"(\.\d{6})\d+", r"\1", value).replace("Z", "+00:00")
    try:
        return datetime.datetime.fromisoformat(value).timestamp()
    except ValueError:
        return 0.0


def _by_repository_tags(
    git: ReleaseRecords, tip: str, chart_path: str, target: str
) -> ReleaseState:
    listed = git.refs(*REPOSITORY_TAGS)
    if not listed:
        return UNKNOWN_STATE
    digest = hashlib.sha256(repr(sorted(listed.items())).encode()).hexdigest()
    latest, versions = _REPOSITORY_RELEASES.get_or_make(
        (tip, chart_path, digest), lambda: _repository_releases(git, tip, chart_path)
    )
    if not latest:
        return UNKNOWN_STATE
    return ReleaseState(f"the repository's release tags (`{latest}`)", target in versions)


def _repository_releases(
    git: ReleaseRecords, tip: str, chart_path: str
) -> tuple[str, frozenset[str]]:
    """The newest repository release tag the tip contains, and the chart's versions at the newest
    of them."""
    tags = git.tag_commits("v[0-9]*", "[0-9]*", merged_into=tip, newest=NEWEST_REPOSITORY_TAGS)
    versions, latest = set(), ""
    for tag, commit in tags:
        if parse_version(tag.removeprefix("v")) is None:
            continue
        meta = read_chart_meta(git.tree(commit), chart_path)
        parsed = parse_version(meta.version) if meta is not None else None
        if parsed is not None:
            versions.add(str(parsed))
            latest = latest or tag
    return latest, frozenset(versions)
