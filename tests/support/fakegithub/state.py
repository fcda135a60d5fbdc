"""What the fake GitHub knows: plain dataclasses owned by one FakeGitHub instance."""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BOT_LOGIN = "chart-review[bot]"


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


@dataclass
class Installation:
    id: int
    account: str
    repos: list[str] = field(default_factory=list)  # full names, "owner/name"


@dataclass
class Repository:
    owner: str
    name: str
    id: int
    default_branch: str = "main"
    clone_url: str = ""  # tests point this at a local bare git repository
    private: bool = False
    branches: dict[str, str] = field(default_factory=dict)  # name -> sha
    tags: dict[str, str] = field(default_factory=dict)  # name -> sha
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)  # (ref, path) -> bytes

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class ChangedFile:
    filename: str
    status: str = "modified"
    additions: int = 0
    deletions: int = 0
    patch: str | None = None  # unified diff hunks; when set, review comments must hit them


@dataclass
class PullRequest:
    repo: str
    number: int
    id: int
    title: str
    user: str
    head_sha: str
    head_ref: str
    base_sha: str
    base_ref: str
    body: str | None = None
    state: str = "open"
    merged: bool = False
    draft: bool = False
    files: list[ChangedFile] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # shas, oldest first
    created_at: datetime = field(default_factory=now)


@dataclass
class Issue:
    repo: str
    number: int
    id: int
    title: str
    user: str
    body: str | None = None
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    created_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)


@dataclass
class CheckRun:
    id: int
    repo: str
    name: str
    head_sha: str
    suite_id: int
    status: str = "queued"
    conclusion: str | None = None
    details_url: str | None = None
    external_id: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    annotations: list[dict[str, Any]] = field(default_factory=list)  # accumulated over updates
    started_at: datetime | None = None
    completed_at: datetime | None = None


@dataclass
class IssueComment:
    id: int
    repo: str
    issue_number: int
    body: str
    user: str
    created_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)


@dataclass
class Review:
    id: int
    repo: str
    pull_number: int
    user: str
    body: str
    state: str  # PENDING, COMMENTED, APPROVED, CHANGES_REQUESTED
    commit_id: str
    submitted_at: datetime | None = None


@dataclass
class ReviewComment:
    id: int
    repo: str
    pull_number: int
    review_id: int | None
    path: str
    body: str
    commit_id: str
    user: str
    line: int | None = None
    side: str = "RIGHT"
    start_line: int | None = None
    start_side: str | None = None
    created_at: datetime = field(default_factory=now)
    updated_at: datetime = field(default_factory=now)


@dataclass
class Reaction:
    id: int
    comment_id: int
    content: str
    user: str
    created_at: datetime = field(default_factory=now)


@dataclass
class Token:
    token: str
    installation_id: int
    expires_at: datetime
    repos: list[str]  # full names this token may reach
    # A workflow token's `permissions:` (scope → read, write or none); None: the installation's.
    permissions: dict[str, str] | None = None


@dataclass
class RequestRecord:
    method: str
    path: str
    query: dict[str, str]
    json: Any
    status: int
    at: float = 0.0  # when it arrived, time.monotonic(): how the client paced its requests


@dataclass
class Fault:
    method: str
    path_re: re.Pattern[str]
    status: int
    times: int
    headers: dict[str, str]
    body: Any

    def matches(self, method: str, path: str) -> bool:
        return self.times > 0 and self.method == method and bool(self.path_re.search(path))


@dataclass
class Hook:
    """Something that happens on GitHub's side when a request arrives (a force-push, a PR
    deleted) — before the request is answered, so it lands in the middle of a job."""

    method: str
    path_re: re.Pattern[str]
    action: Callable[[], None]
    times: int

    def matches(self, method: str, path: str) -> bool:
        return self.times > 0 and self.method == method and bool(self.path_re.search(path))


@dataclass
class GitHubState:
    """Every fact of one fake GitHub; ids come from one counter so they never collide.

    The server's thread changes it while a test's thread arranges and inspects it: both sides hold
    `lock` while they touch it (every route runs under it, see api.LockedRoute; the inspection
    helpers take their snapshots under it). Reentrant: a hook runs under it and may arrange more."""

    app_id: int = 4242
    app_slug: str = "chart-review"
    bot_login: str = BOT_LOGIN
    token_lifetime: timedelta = timedelta(hours=1)  # GitHub's installation tokens last an hour
    installations: dict[int, Installation] = field(default_factory=dict)
    repos: dict[str, Repository] = field(default_factory=dict)
    pulls: dict[tuple[str, int], PullRequest] = field(default_factory=dict)
    issues: dict[tuple[str, int], Issue] = field(default_factory=dict)
    check_runs: dict[int, CheckRun] = field(default_factory=dict)
    suites: dict[tuple[str, str], int] = field(default_factory=dict)  # (repo, sha) -> id
    issue_comments: dict[int, IssueComment] = field(default_factory=dict)
    reviews: dict[int, Review] = field(default_factory=dict)
    review_comments: dict[int, ReviewComment] = field(default_factory=dict)
    reactions: dict[int, Reaction] = field(default_factory=dict)
    permissions: dict[tuple[str, str], str] = field(default_factory=dict)  # (repo, login)
    tokens: dict[str, Token] = field(default_factory=dict)
    user_ids: dict[str, int] = field(default_factory=dict)
    requests: list[RequestRecord] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1001))
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def next_id(self) -> int:
        return next(self._ids)

    def next_number(self, repo: str) -> int:
        """PRs and issues share one number sequence per repository, as on GitHub."""
        used = [n for r, n in self.pulls if r == repo] + [n for r, n in self.issues if r == repo]
        return max(used, default=0) + 1

    def user_id(self, login: str) -> int:
        return self.user_ids.setdefault(login, 500 + len(self.user_ids))

    def suite_id(self, repo: str, sha: str) -> int:
        return self.suites.setdefault((repo, sha), self.next_id())

    def installation_for(self, repo: str) -> Installation | None:
        return next((i for i in self.installations.values() if repo in i.repos), None)

    def run_hooks(self, method: str, path: str) -> None:
        for hook in self.hooks:
            if hook.matches(method, path):
                hook.times -= 1
                hook.action()

    def take_fault(self, method: str, path: str) -> Fault | None:
        fault = next((f for f in self.faults if f.matches(method, path)), None)
        if fault:
            fault.times -= 1
        return fault

    def resolve_ref(self, repo: Repository, ref: str) -> str | None:
        """A branch, tag, heads/x, tags/x or a full sha, as GitHub accepts for `ref`."""
        for prefix, table in (("heads/", repo.branches), ("tags/", repo.tags)):
            if ref.startswith(prefix) and ref[len(prefix) :] in table:
                return table[ref[len(prefix) :]]
        if ref in repo.branches:
            return repo.branches[ref]
        if ref in repo.tags:
            return repo.tags[ref]
        return ref if re.fullmatch(r"[0-9a-f]{40}", ref) else None
