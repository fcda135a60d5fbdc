"""The chart version facts the version check needs: can Helm read it, how big a bump is, what comes
next.

Helm reads `version` with the Masterminds semver library's loose parse: an optional lowercase `v`,
MAJOR with MINOR and PATCH optional (`1.2` is 1.2.0), leading zeros allowed there, then SemVer's
pre-release (no leading zero in a numeric identifier) and build metadata. A chart whose version it
cannot read does not load at all; one it reads but that is not strict SemVer 2 (`v1.2.3`, `1.2`)
loads, is packaged and published, and only gets a `helm lint` warning (the lint check's to say).
A Helm repository orders releases by that reading, as these rules do through the `semver`
library (build metadata never orders two versions)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Literal

import semver

BumpLevel = Literal["major", "minor", "patch", "prerelease"]
DEFAULT_LEVEL: BumpLevel = "patch"
_IDENTIFIERS = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
# What Helm reads as a version (Masterminds semver's NewVersion); checked by `helm lint` itself on
# each form in tests/versions/test_semver.py.
HELM_VERSION_RE = re.compile(
    rf"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-({_IDENTIFIERS}))?(?:\+({_IDENTIFIERS}))?"
)
# A numeric pre-release identifier with a leading zero, which SemVer and Helm refuse (`1.0.0-01`).
_LEADING_ZERO_RE = re.compile(r"0\d+")
_UINT64 = 2**64  # Masterminds keeps each of MAJOR.MINOR.PATCH in a uint64
# What a person means by a version that Helm refuses: a capital `V`, a free-form pre-release.
LOOSE_VERSION_RE = re.compile(
    r"^[vV]?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


def parse_version(text: str | None) -> semver.Version | None:
    """The version Helm reads in `text` (`v1.2` is 1.2.0), or None when Helm cannot read it."""
    return None if text is None else _parsed(text)


def is_semver2(text: str) -> bool:
    """Whether `text` is strict SemVer 2, as `helm lint` wants it (else it warns)."""
    return parse_version(text) is not None and semver.Version.is_valid(text)


# The open PRs' claims and a board's rows parse the same few hundred versions again and again; a
# Version is never changed in place (`replace` makes another).
@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> semver.Version | None:
    match = HELM_VERSION_RE.fullmatch(text)
    if match is None:
        return None
    major, minor, patch, pre, build = match.groups()
    core = (int(major), int(minor or 0), int(patch or 0))
    if any(n >= _UINT64 for n in core):
        return None
    if pre is not None and any(_LEADING_ZERO_RE.fullmatch(i) for i in pre.split(".")):
        return None
    return semver.Version(*core, prerelease=pre, build=build)


def styled(version: semver.Version, like: Iterable[str | None]) -> str:
    """`version` written as the first of `like` that Helm reads is: with its `v` when it has one,
    so that a suggestion keeps the repository's convention (`v0.5.30` -> `v0.5.31`)."""
    for text in like:
        if text is not None and parse_version(text) is not None:
            return f"v{version}" if text.startswith("v") else str(version)
    return str(version)


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
    """The version `text` means, even where Helm cannot read it (`V1.2.3`, `1.2.3-01`): what a
    suggestion must not go below. None when it does not even look like a version."""
    read = parse_version(text)
    if read is not None or text is None:
        return read
    match = LOOSE_VERSION_RE.match(text.strip())
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    core = f"{int(major)}.{int(minor or 0)}.{int(patch or 0)}"
    # A pre-release Helm refuses (`1.2.3-01`) is dropped: the core is what is meant.
    return (pre is not None and parse_version(f"{core}-{pre}")) or parse_version(core)


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
