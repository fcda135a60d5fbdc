"""A chart's `kubeVersion` against the Kubernetes version rendered for, as Helm checks it before it
renders (`chart requires kubeVersion: X which is incompatible with Kubernetes vY`): Masterminds
semver v3 constraints, which is what Helm parses them with. `||` separates alternatives; within one,
constraints separated by commas or spaces must all hold; `1.2 - 1.4` is a range; `x`, `X`, `*` or a
missing part is a wildcard; and a version with a pre-release (`v1.29.3-eks-1`) satisfies a
constraint only when that constraint names a pre-release itself (hence charts' `>=1.25.0-0`).
A constraint Helm cannot parse makes every version incompatible, as in Helm."""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = (
    r"v?([0-9xX*]+)(\.[0-9xX*]+)?(\.[0-9xX*]+)?"
    r"(-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?"
)
_OPS = r"!=|>=|=>|<=|=<|~>|=|>|<|~|\^|"
_ONE_RE = re.compile(rf"^\s*({_OPS})\s*({_VERSION})\s*$")
_FIND_RE = re.compile(rf"({_OPS})\s*({_VERSION})")
_VALID_RE = re.compile(
    rf"^(\s*({_OPS})\s*({_VERSION})\s*)((?:\s+|,\s*)({_OPS})\s*({_VERSION})\s*)*$"
)
_RANGE_RE = re.compile(rf"\s*({_VERSION})\s+-\s+({_VERSION})\s*")
_EXACT_RE = re.compile(
    r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


@dataclass(frozen=True, order=False)
class _Version:
    major: int
    minor: int
    patch: int
    pre: str

    def compare(self, other: _Version) -> int:
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        return _compare_pre(self.pre, other.pre)


@dataclass(frozen=True)
class _Constraint:
    op: str
    version: _Version
    dirty: bool  # some part was a wildcard or missing
    minor_dirty: bool
    patch_dirty: bool


def satisfies(kube_version: str, constraint: str) -> bool:
    """Whether `kube_version` (`v1.29.0`) meets the chart's `kubeVersion`."""
    version = _parse_version(kube_version)
    alternatives = _parse(constraint)
    if version is None or alternatives is None:
        return False
    return any(all(_check(version, c) for c in group) for group in alternatives)


def _parse_version(text: str) -> _Version | None:
    match = _EXACT_RE.match(text.strip())
    if match is None:
        return None
    major, minor, patch, pre = match.groups()
    return _Version(int(major), int(minor or 0), int(patch or 0), pre or "")


def _parse(text: str) -> list[list[_Constraint]] | None:
    text = _RANGE_RE.sub(lambda m: f" >= {m[1]}, <= {m[7]} ", text)
    groups = []
    for part in text.split("||"):
        if not _VALID_RE.match(part):
            return None
        found = [m[0] for m in _FIND_RE.finditer(part)] or [part]
        constraints = [_one(item) for item in found]
        if any(c is None for c in constraints):
            return None
        groups.append([c for c in constraints if c is not None])
    return groups


def _one(text: str) -> _Constraint | None:
    match = _ONE_RE.match(text)
    if match is None:
        return None
    op, major, minor, patch, pre = match[1], match[3], match[4], match[5], match[6]
    pre = (pre or "").lstrip("-")
    if _wild(major):
        return _Constraint(op, _Version(0, 0, 0, pre), True, False, False)
    if minor is None or _wild(minor[1:]):
        return _Constraint(op, _Version(int(major), 0, 0, pre), True, True, False)
    if patch is None or _wild(patch[1:]):
        return _Constraint(op, _Version(int(major), int(minor[1:]), 0, pre), True, False, True)
    return _Constraint(
        op, _Version(int(major), int(minor[1:]), int(patch[1:]), pre), False, False, False
    )


def _wild(part: str) -> bool:
    return part in ("x", "X", "*")


def _check(v: _Version, c: _Constraint) -> bool:
    if v.pre and not c.version.pre:
        return False  # a pre-release only satisfies a constraint that asks for pre-releases
    op = {"=>": ">=", "=<": "<=", "~>": "~"}.get(c.op, c.op)
    return _CHECKS[op](v, c)


def _equal(v: _Version, c: _Constraint) -> bool:
    return _tilde(v, c) if c.dirty else v.compare(c.version) == 0


def _not_equal(v: _Version, c: _Constraint) -> bool:
    if not c.dirty:
        return v.compare(c.version) != 0
    if v.major != c.version.major:
        return True
    # With a wildcard patch, the same major and minor is equal.
    return not c.minor_dirty and v.minor != c.version.minor


def _greater(v: _Version, c: _Constraint) -> bool:
    if not c.dirty:
        return v.compare(c.version) > 0
    if v.major != c.version.major:
        return v.major > c.version.major
    if c.minor_dirty:
        return False  # >11 needs 12 or higher
    if c.patch_dirty:
        return v.minor > c.version.minor  # >11.1 needs 11.2 or higher
    return v.compare(c.version) > 0


def _less_equal(v: _Version, c: _Constraint) -> bool:
    if not c.dirty:
        return v.compare(c.version) <= 0
    if v.major > c.version.major:
        return False
    return not (v.major == c.version.major and v.minor > c.version.minor and not c.minor_dirty)


def _tilde(v: _Version, c: _Constraint) -> bool:
    con = c.version
    if v.compare(con) < 0:
        return False
    if (con.major, con.minor, con.patch) == (0, 0, 0) and not c.minor_dirty and not c.patch_dirty:
        return True
    if v.major != con.major:
        return False
    return c.minor_dirty or v.minor == con.minor


def _caret(v: _Version, c: _Constraint) -> bool:
    con = c.version
    if v.compare(con) < 0:
        return False
    if con.major > 0 or c.minor_dirty:
        return v.major == con.major
    if v.major > 0:
        return False
    if con.minor > 0 or c.patch_dirty:
        return v.minor == con.minor
    return v.minor == 0 and v.patch == con.patch  # ^0.0.3 is exactly 0.0.3


_CHECKS = {
    "": _equal,
    "=": _equal,
    "!=": _not_equal,
    ">": _greater,
    "<": lambda v, c: v.compare(c.version) < 0,
    ">=": lambda v, c: v.compare(c.version) >= 0,
    "<=": _less_equal,
    "~": _tilde,
    "^": _caret,
}


def _compare_pre(a: str, b: str) -> int:
    """SemVer's pre-release order: none ranks above any; dot-separated parts compare numerically
    when both are numbers, else as text, numbers below text."""
    if a == b:
        return 0
    if not a or not b:
        return 1 if not a else -1
    for x, y in zip(a.split("."), b.split("."), strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return -1 if len(a.split(".")) < len(b.split(".")) else 1
