"""Kubernetes versions as the kube check compares them: a minor release, `(1, 30)`."""

from __future__ import annotations

import re

Minor = tuple[int, int]
_MINOR_RE = re.compile(r"^v?(\d+)\.(\d+)")


def minor(version: str) -> Minor:
    """`1.30`, `v1.30.2`, `v1.30.0-eks.1` → (1, 30); a ValueError for anything else."""
    match = _MINOR_RE.match(version.strip())
    if match is None:
        raise ValueError(f"{version!r} is not a Kubernetes version")
    return int(match[1]), int(match[2])


def shown(version: Minor) -> str:
    return f"{version[0]}.{version[1]}"
