"""SemVer 2 facts a chart version needs: is it valid, how big a bump is, what comes next.

Helm requires chart versions to be SemVer 2, and a Helm repository orders releases by it, so these
rules follow the spec through the `semver` library (build metadata never orders two versions)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Literal

import semver

BumpLevel = Literal["major", "minor", "patch", "prerelease"]
DEFAULT_LEVEL: BumpLevel = "patch"
# What a person means by a version that SemVer 2 refuses: leading zeros, a `v`, a missing part.
LOOSE_VERSION_RE = re.compile(
    r"^[vV]?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


def parse_version(text: str | None) -> semver.Version | None:
    """The version `text` names, or None when it is not SemVer 2 (`v1.2.3` and `1.2` are not)."""
    return None if text is None else _parsed(text)


# The open PRs' claims and a board's rows parse the same few hundred versions again and again; a
# Version is never changed in place (`replace` makes another).
@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> semver.Version | None:
    try:
        return semver.Version.parse(text.strip())
    except (ValueError, TypeError):
        return None


def is_greater(new: semver.Version, old: semver.Version) -> bool:
    return new.compare(old) > 0


def same_version(a: semver.Version, b: semver.Version) -> bool:
    """Equal by precedence: `1.2.3+a` and `1.2.3+b` name the same release."""
    return a.compare(b) == 0


def bump_level(base: semver.Version | None, head: semver.Version | None) -> BumpLevel:
    """The size of the step from `base` to `head`; a patch when there is no step to measure."""
    if base is None or head is None or not is_greater(head, base):
        return DEFAULT_LEVEL
    if head.major != base.major:
        return "major"
    if head.minor != base.minor:
        return "minor"
    if head.patch != base.patch or head.prerelease is None:
        return "patch"
    return "prerelease"


def coerce_version(text: str | None) -> semver.Version | None:
    """The version `text` means when it is not quite SemVer 2 (`0.46.00`, `v1.2.3`, `1.2`): what a
    suggestion must not go below. None when it does not even look like a version."""
    strict = parse_version(text)
    if strict is not None or text is None:
        return strict
    match = LOOSE_VERSION_RE.match(text.strip())
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    core = (int(major), int(minor or 0), int(patch or 0))
    try:
        return semver.Version(*core, prerelease=pre)
    except ValueError:  # a pre-release that is not SemVer either (`1.2.3-01`): the core is meant
        return semver.Version(*core)


def next_free_version(
    level: BumpLevel,
    taken: Iterable[semver.Version | None],
    at_least: semver.Version | None = None,
) -> semver.Version:
    """The smallest step of `level` above every version in `taken` (develop's, and every version an
    open PR claims): free whichever of those PRs merges first. With `at_least` (the version the
    head means), never below it: a suggestion does not go backwards, so when that version is
    itself above every taken one, it is the suggestion (`0.46.00` → `0.46.0`, not `0.45.29`)."""
    versions = [v for v in taken if v is not None]
    if at_least is not None and all(is_greater(at_least, v) for v in versions):
        return at_least
    floor = max([*versions, *([at_least] if at_least is not None else [])], default=None)
    if floor is None:
        return semver.Version(0, 1, 0)
    # next_version finalises a pre-release at the same level (1.3.0-rc.1 -> 1.3.0), still above it.
    return floor.next_version(level)
