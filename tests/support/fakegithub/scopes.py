"""A workflow token's `permissions:`, as GitHub enforces them: each endpoint belongs to one
permission (the check runs to `checks`, a PR's reviews and comments to `pull-requests`, …); a read
needs `read` or `write` of it, anything else `write`, and a refusal is GitHub's 403 "Resource not
accessible by integration". A token issued with no permissions (the App's installation token) may
do everything the installation may."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .api import ApiError

REFUSED = "Resource not accessible by integration"
READS = frozenset({"GET", "HEAD"})
_REPO = r"^/repos/[^/]+/[^/]+"
# Which permission an endpoint needs; a PR's conversation comments are also issue comments, which
# GitHub lets either permission write. The first match decides; the rest is `metadata` (readable).
SCOPES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(_REPO + r"/(check-runs|check-suites)(/|$)"), ("checks",)),
    (re.compile(_REPO + r"/commits/[^/]+/(check-runs|check-suites)$"), ("checks",)),
    (re.compile(_REPO + r"/issues/(\d+/)?comments(/|$)"), ("pull-requests", "issues")),
    (re.compile(_REPO + r"/issues(/|$)"), ("issues",)),
    (re.compile(_REPO + r"/pulls(/|$)"), ("pull-requests",)),
    (re.compile(_REPO + r"/(git|contents|tarball|zipball|commits|compare)(/|$)"), ("contents",)),
)
# `permissions: read-all`, and what GitHub gives a fork's `pull_request` run whatever it asks.
READ_ALL = {scope: "read" for scope in ("checks", "contents", "issues", "pull-requests")}


def scopes_for(path: str) -> tuple[str, ...]:
    return next((names for pattern, names in SCOPES if pattern.search(path)), ())


def check_scope(permissions: Mapping[str, str] | None, method: str, path: str) -> None:
    """Refuse a request the token's permissions do not cover, as GitHub does."""
    if permissions is None:
        return
    needed = ("read", "write") if method in READS else ("write",)
    names = scopes_for(path)
    if names and not any(permissions.get(n, "none") in needed for n in names):
        raise ApiError(403, REFUSED)
