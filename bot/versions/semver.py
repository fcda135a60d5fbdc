"""SemVer 2 facts a chart version needs: is it valid, how big a bump is, what comes next.

Helm requires chart versions to be SemVer 2, and a Helm repository orders releases by it, so these
rules follow the spec through the `semver` library (build metadata never orders two versions)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import semver

BumpLevel = Literal["major", "minor", "patch", "prerelease"]
DEFAULT_LEVEL: BumpLevel = "patch"


def parse_version(text: str | None) -> semver.Version | None:
    """The version `text` names, or None when it is not SemVer 2 (`v1.2.3` and `1.2` are not)."""
    if text is None:
        return None
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


def next_free_version(level: BumpLevel, taken: Iterable[semver.Version | None]) -> semver.Version:
    """The smallest step of `level` above every version in `taken` (develop's, and every version an
    open PR claims): free whichever of those PRs merges first."""
    floor = max((v for v in taken if v is not None), default=None)
    if floor is None:
        return semver.Version(0, 1, 0)
    # next_version finalises a pre-release at the same level (1.3.0-rc.1 -> 1.3.0), still above it.
    return floor.next_version(level)
