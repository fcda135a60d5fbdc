"""`kubeVersion` constraints as Helm checks them (Masterminds semver v3), on the forms real charts
write: `>=1.25.0-0`, ranges, wildcards, alternatives, and cloud versions with a pre-release."""

from __future__ import annotations

import pytest

from bot.kube.constraint import satisfies


@pytest.mark.parametrize(
    ("version", "constraint", "expected"),
    [
        ("v1.29.0", ">=1.25.0-0", True),
        ("v1.24.9", ">=1.25.0-0", False),
        # A cloud's version carries a pre-release: only a constraint naming one (the `-0`) admits it.
        ("v1.29.3-eks-4f4795d", ">=1.25.0-0", True),
        ("v1.29.3-eks-4f4795d", ">=1.25.0", False),
        ("v1.29.0", ">=1.21.0-0 <1.30.0-0", True),
        ("v1.30.0", ">=1.21.0-0 <1.30.0-0", False),
        ("v1.29.0", ">= 1.19, < 1.31", True),
        ("v1.29.0", "^1.20", True),
        ("v1.29.4", "~1.29", True),
        ("v1.30.0", "~1.29", False),
        ("v1.29.0", "1.x", True),
        ("v1.29.0", ">=1.30 || 1.29.x", True),
        ("v1.28.9", "1.20 - 1.28", True),
        ("v1.29.0", "1.20 - 1.28", False),
        ("v1.29.0", ">1.28", True),  # >1.28 is 1.29 or later
        ("v1.28.5", ">1.28", False),
        ("v1.29.0", "!=1.29.0", False),
        ("v1.29.0", "<=1.29", True),
        ("v1.30.0", "<=1.29", False),
    ],
)
def test_constraints(version: str, constraint: str, expected: bool) -> None:
    assert satisfies(version, constraint) is expected


def test_a_constraint_helm_cannot_parse_admits_no_version() -> None:
    assert not satisfies("v1.29.0", "at least 1.25")
