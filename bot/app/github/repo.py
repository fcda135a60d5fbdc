"""One repository through one installation's token: read PR state, publish a review's results.

I/O only: what to say comes from `bot/report/bodies.py`. Every call that reaches GitHub goes through
`RepoClient._call`, which fetches a new token and tries once more when GitHub answers 401 (the
cached token expired early or was revoked).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from urllib.parse import quote

from github import Auth, Github, GithubException
from github.GithubObject import NotSet
from github.NamedUser import NamedUser
from github.PullRequest import PullRequest

from bot.app.github import checks as github_checks
from bot.model.context import OpenPR
from bot.report.bodies import SUMMARY_MARKER, CheckRunOutput
from bot.report.inline import InlineComment, PostedComment

T = TypeVar("T")
ROLES = ("admin", "maintain", "write", "triage", "read")
NO_ROLE = "none"
NOT_FOUND = 404
REVIEW_EVENT = "COMMENT"  # the bot informs; approving or blocking is branch protection's job
REVIEW_SIDE = "RIGHT"  # comments sit on the head side of the diff


@dataclass(frozen=True)
class RepoInfo:
    default_branch: str
    clone_url: str
    private: bool
    size_kb: int = field(default=0, compare=False)  # GitHub's estimate of the repository's size


@dataclass(frozen=True)
class PullState:
    number: int
    state: str
    merged: bool
    draft: bool
    head_sha: str
    head_ref: str
    base_ref: str
    base_sha: str
    title: str
    body: str
    user: str
    # Whether the PR's repository (its base) is private; unknown reads as public, the stricter
    # case for what a review may read elsewhere (bot/app/link_policy.py).
    private: bool = False
    # When it was opened (ISO 8601): said by the duplicates check, never compared.
    created_at: str = field(default="", compare=False)

    def open_pr(self) -> OpenPR:
        """As the engine sees another open PR."""
        return OpenPR(
            self.number,
            self.head_sha,
            self.head_ref,
            self.base_ref,
            self.title,
            body=self.body,
            created_at=self.created_at,
        )


class InstallationAuth(Auth.Auth):
    """Sends the installation's current token on every request, so one client outlives any
    single token (they last an hour)."""

    def __init__(self, current: Callable[[], str], forget: Callable[[str], None]) -> None:
        self._current = current
        self._forget = forget
        self._last = ""

    @property
    def token_type(self) -> str:
        return "token"

    @property
    def token(self) -> str:
        self._last = self._current()
        return self._last

    @property
    def _masked_token(self) -> str:
        return "token (installation token removed)"

    def renew(self) -> None:
        self._forget(self._last)


def _pull_state(pr: PullRequest, merged: bool | None = None) -> PullState:
    return PullState(
        number=pr.number,
        state=pr.state,
        merged=pr.merged if merged is None else merged,
        draft=bool(pr.draft),
        head_sha=pr.head.sha,
        head_ref=pr.head.ref,
        base_ref=pr.base.ref,
        base_sha=pr.base.sha,
        title=pr.title,
        body=pr.body or "",
        user=pr.user.login,
        private=bool(pr.base.repo.private),
        created_at=pr.created_at.isoformat() if pr.created_at else "",
    )


UNAUTHORIZED = 401
GONE = (404, 410, 422)  # a check run that no longer exists or no longer takes updates


class RepoClient:
    def __init__(
        self,
        full_name: str,
        gh: Github,
        auth: InstallationAuth,
        bot_login: Callable[[], str],
        app_id: int | github_checks.AppIdentity,
    ) -> None:
        self.full_name = full_name
        self._gh = gh  # lazy: objects are fetched only when a call needs their data
        self._auth = auth
        self._bot_login = bot_login
        self._app = (
            app_id
            if isinstance(app_id, github_checks.AppIdentity)
            else (github_checks.AppIdentity(app_id))
        )
        self._repo = gh.get_repo(full_name)
        self._url = f"/repos/{full_name}"
        self._reused: set[int] = set()  # runs begun again on the same head by this client
        self._runs: dict[int, tuple[str, str]] = {}  # run id → (head sha, name), as begun

    def _call(self, fn: Callable[[], T]) -> T:
        """One call, and once more with a fresh token if GitHub says ours is no longer good (an
        installation token expires after an hour; a long job can outlive it)."""
        try:
            return fn()
        except GithubException as exc:
            if exc.status != UNAUTHORIZED:
                raise
            self._auth.renew()
            return fn()

    def _request(self, verb: str, path: str, **kwargs: Any) -> Any:
        _, data = self._call(
            lambda: self._gh.requester.requestJsonAndCheck(verb, self._url + path, **kwargs)
        )
        return data

    # Reading

    def info(self) -> RepoInfo:
        repo = self._call(lambda: self._gh.get_repo(self.full_name).complete())
        return RepoInfo(repo.default_branch, repo.clone_url, repo.private, repo.size or 0)

    def pull(self, number: int) -> PullState | None:
        try:
            return _pull_state(self._call(lambda: self._repo.get_pull(number).complete()))
        except GithubException as exc:
            if exc.status == NOT_FOUND:
                return None
            raise

    def open_pulls(self, base_ref: str | None = None) -> list[PullState]:
        base = NotSet if base_ref is None else base_ref
        pulls = self._call(lambda: list(self._repo.get_pulls(state="open", base=base)))
        return [_pull_state(pr, merged=False) for pr in pulls]  # an open PR is not merged

    def pulls_with_head(self, sha: str) -> list[PullState]:
        return [pr for pr in self.open_pulls() if pr.head_sha == sha]

    def permission(self, login: str) -> str:
        """The user's role; a custom role counts as its base role, anything unknown as none."""
        try:
            data = self._request("GET", f"/collaborators/{quote(login, safe='')}/permission")
        except GithubException as exc:
            if exc.status == NOT_FOUND:
                return NO_ROLE  # fail closed: no answer is no permission
            raise
        for role in (data.get("role_name"), data.get("permission")):
            if role in ROLES:
                return str(role)
        return NO_ROLE

    # Check runs

    def begin_check_runs(self, head_sha: str, names: Sequence[str]) -> dict[str, int]:
        """A run per name, in progress; a re-run edits this app's run of that name on this head
        instead of adding a second one. The runs already there are listed once for all names."""
        wanted = github_checks.unique(names)
        requester = self._gh.requester
        there = self._call(
            lambda: github_checks.find_runs(requester, self._url, head_sha, wanted, self._app)
        )
        return {name: self._begin(head_sha, name, there.get(name)) for name in wanted}

    def _begin(self, head_sha: str, name: str, found: int | None) -> int:
        requester = self._gh.requester
        if found is None:
            run_id = self._call(
                lambda: github_checks.start_run(requester, self._url, head_sha, name)
            )
        else:
            self._call(lambda: github_checks.restart_run(requester, self._url, found))
            self._reused.add(found)
            run_id = found
        self._runs[run_id] = (head_sha, name)
        return run_id

    def unfinished_runs(self, head_sha: str) -> list[int]:
        requester = self._gh.requester
        return self._call(
            lambda: github_checks.unfinished_runs(requester, self._url, head_sha, self._app)
        )

    def complete_check_run(self, run_id: int, out: CheckRunOutput) -> None:
        already: set[Any] = set()
        if run_id in self._reused and out.annotations:
            requester = self._gh.requester
            already = self._call(
                lambda: github_checks.existing_annotations(requester, self._url, run_id)
            )
        try:
            for body in github_checks.completion_bodies(out, already):
                self._request("PATCH", f"/check-runs/{run_id}", input=body)
        except GithubException as exc:
            if exc.status not in GONE or run_id not in self._runs:
                raise
            # The run was deleted or can no longer be edited: the verdict goes on a new run of
            # the same name, which is the one GitHub shows.
            head_sha, name = self._runs[run_id]
            fresh = self._start(head_sha, name)
            for body in github_checks.completion_bodies(out):
                self._request("PATCH", f"/check-runs/{fresh}", input=body)

    def _start(self, head_sha: str, name: str) -> int:
        requester = self._gh.requester
        run_id = self._call(lambda: github_checks.start_run(requester, self._url, head_sha, name))
        self._runs[run_id] = (head_sha, name)
        return run_id

    # Conversation

    def upsert_summary_comment(self, number: int, body: str) -> int:
        """The one summary comment per PR: the bot's comment with the marker, edited in place."""
        issue = self._repo.get_issue(number)
        login = self._bot_login()
        comments = self._call(lambda: list(issue.get_comments()))
        mine = next(
            (c for c in comments if c.user.login == login and SUMMARY_MARKER in (c.body or "")),
            None,
        )
        if mine is None:
            return self._call(lambda: issue.create_comment(body)).id
        self._call(lambda: mine.edit(body))
        return mine.id

    def reply(self, number: int, body: str) -> None:
        issue = self._repo.get_issue(number)
        self._call(lambda: issue.create_comment(body))

    def react(self, comment_id: int, content: str = "eyes") -> None:
        self._request(
            "POST", f"/issues/comments/{comment_id}/reactions", input={"content": content}
        )

    def bot_review_comments(self, number: int) -> list[PostedComment]:
        pr = self._repo.get_pull(number)
        login = self._bot_login()
        found = self._call(lambda: list(pr.get_review_comments()))
        # An outdated comment has no current line; its original line is what was posted.
        return [
            PostedComment(c.id, c.path, c.line if c.line is not None else c.original_line, c.body)
            for c in found
            if c.user.login == login
        ]

    def edit_review_comment(self, comment_id: int, body: str) -> None:
        """A comment posted by an earlier review of the PR, given this review's words."""
        self._request("PATCH", f"/pulls/comments/{comment_id}", input={"body": body})

    def post_review(
        self, number: int, head_sha: str, comments: Sequence[InlineComment], body: str
    ) -> None:
        if not comments:
            return
        payload = {
            "commit_id": head_sha,
            "body": body,
            "event": REVIEW_EVENT,
            "comments": [
                {
                    "path": c.path,
                    "line": c.line,
                    "side": REVIEW_SIDE,
                    "body": c.body,
                    # A multi-line suggestion replaces start_line..line, as GitHub applies it.
                    **(
                        {"start_line": c.start_line, "start_side": REVIEW_SIDE}
                        if c.start_line
                        else {}
                    ),
                }
                for c in comments
            ],
        }
        self._request("POST", f"/pulls/{number}/reviews", input=payload)

    # The release board

    def upsert_issue(self, title: str, body: str) -> int:
        """The bot's open issue with exactly this title, edited; created when there is none."""
        login = self._bot_login()
        # PyGithub takes a login string here (it asserts str or NamedUser); its hint says only
        # NamedUser, and a lazy NamedUser would cost a GET /users/{login}.
        creator = cast(NamedUser, login)
        issues = self._call(lambda: list(self._repo.get_issues(state="open", creator=creator)))
        mine = next((i for i in issues if i.title == title and i.user.login == login), None)
        if mine is None:
            return self._call(lambda: self._repo.create_issue(title=title, body=body)).number
        self._call(lambda: mine.edit(body=body))
        return mine.number
