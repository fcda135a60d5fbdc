"""How a test arranges and inspects the fake's state: a few lines per fact."""

from __future__ import annotations

from datetime import timedelta

from .auth import issue_token
from .state import (
    ChangedFile,
    CheckRun,
    GitHubState,
    Installation,
    Issue,
    IssueComment,
    PullRequest,
    Reaction,
    Repository,
    Review,
    ReviewComment,
    now,
)

DEFAULT_INSTALLATION = 1


class StateBuilder:
    def __init__(self, state: GitHubState) -> None:
        self.state = state

    @property
    def bot_login(self) -> str:
        return self.state.bot_login

    # Arrange

    def add_installation(self, installation_id: int, account: str) -> Installation:
        inst = Installation(installation_id, account)
        with self.state.lock:
            self.state.installations[installation_id] = inst
        return inst

    def add_repo(
        self,
        full_name: str,
        *,
        installation_id: int = DEFAULT_INSTALLATION,
        default_branch: str = "main",
        clone_url: str = "",
        private: bool = False,
        branches: dict[str, str] | None = None,
    ) -> Repository:
        """A repository, installed in `installation_id` (created for its owner if new)."""
        owner, name = full_name.split("/")
        with self.state.lock:
            repo = Repository(owner, name, self.state.next_id(), default_branch, clone_url, private)
            repo.branches.update(branches or {})
            self.state.repos[full_name] = repo
            inst = self.state.installations.get(installation_id)
            inst = inst or self.add_installation(installation_id, owner)
            inst.repos.append(full_name)
        return repo

    def add_pull(
        self,
        repo: str,
        *,
        head_sha: str,
        base_sha: str,
        head_ref: str = "feature",
        base_ref: str = "main",
        title: str = "Update the chart",
        user: str = "contributor",
        number: int | None = None,
        files: list[ChangedFile] | None = None,
        **extra: object,
    ) -> PullRequest:
        """An open PR; `extra` sets any other PullRequest field (body, state, merged, draft…)."""
        with self.state.lock:
            pr = PullRequest(
                repo=repo,
                number=number or self.state.next_number(repo),
                id=self.state.next_id(),
                title=title,
                user=user,
                head_sha=head_sha,
                head_ref=head_ref,
                base_sha=base_sha,
                base_ref=base_ref,
                files=files or [],
            )
            self.update_pull(pr, **extra)
            self.state.pulls[(repo, pr.number)] = pr
        return pr

    def update_pull(self, pr: PullRequest, **changes: object) -> PullRequest:
        """All `changes` at once: a request never sees the PR half-updated."""
        for key in changes:
            if not hasattr(pr, key):
                raise AttributeError(f"PullRequest has no field {key!r}")
        with self.state.lock:
            for key, value in changes.items():
                setattr(pr, key, value)
        return pr

    def add_issue(
        self,
        repo: str,
        title: str,
        body: str = "",
        user: str = "maintainer",
        labels: tuple[str, ...] = (),
    ) -> Issue:
        with self.state.lock:
            number = self.state.next_number(repo)
            issue = Issue(
                repo, number, self.state.next_id(), title, user, body, labels=list(labels)
            )
            self.state.issues[(repo, number)] = issue
        return issue

    def add_issue_comment(
        self, repo: str, issue_number: int, body: str, user: str = "contributor"
    ) -> IssueComment:
        with self.state.lock:
            comment = IssueComment(self.state.next_id(), repo, issue_number, body, user)
            self.state.issue_comments[comment.id] = comment
        return comment

    def set_permission(self, repo: str, login: str, role: str) -> None:
        """`role` is admin, maintain, write, triage, read or none."""
        with self.state.lock:
            self.state.permissions[(repo, login)] = role

    def set_branch(self, repo: str, name: str, sha: str) -> None:
        with self.state.lock:
            self.state.repos[repo].branches[name] = sha

    def set_file(self, repo: str, path: str, content: str | bytes, ref: str = "main") -> None:
        data = content.encode() if isinstance(content, str) else content
        with self.state.lock:
            self.state.repos[repo].files[(ref, path)] = data

    # Credentials

    @property
    def token_lifetime(self) -> timedelta:
        return self.state.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, lifetime: timedelta) -> None:
        with self.state.lock:
            self.state.token_lifetime = lifetime

    def issue_token(
        self,
        installation_id: int = DEFAULT_INSTALLATION,
        permissions: dict[str, str] | None = None,
    ) -> str:
        """An installation token without the JWT round trip, for tests about something else;
        with `permissions`, a workflow token limited to them (scopes.py)."""
        with self.state.lock:
            repos = list(self.state.installations[installation_id].repos)
            lifetime = self.state.token_lifetime
            return issue_token(self.state, installation_id, lifetime, repos, permissions).token

    def expire_tokens(self) -> None:
        """Every token issued so far expires now, as if the job had run past the hour."""
        with self.state.lock:
            for token in self.state.tokens.values():
                token.expires_at = now() - timedelta(seconds=1)

    # Inspect: each a list taken under the lock, while the server may be adding to the state. The
    # items are the live records (a run's status may still change after the list is taken).

    def check_runs(self, repo: str, head_sha: str | None = None) -> list[CheckRun]:
        with self.state.lock:
            runs = list(self.state.check_runs.values())
        return [r for r in runs if r.repo == repo and head_sha in (None, r.head_sha)]

    def issue_comments(self, repo: str, issue_number: int) -> list[IssueComment]:
        with self.state.lock:
            found = list(self.state.issue_comments.values())
        return [c for c in found if (c.repo, c.issue_number) == (repo, issue_number)]

    def reviews(self, repo: str, pull_number: int) -> list[Review]:
        with self.state.lock:
            found = list(self.state.reviews.values())
        return [r for r in found if (r.repo, r.pull_number) == (repo, pull_number)]

    def review_comments(self, repo: str, pull_number: int) -> list[ReviewComment]:
        with self.state.lock:
            found = list(self.state.review_comments.values())
        return [c for c in found if (c.repo, c.pull_number) == (repo, pull_number)]

    def reactions(self, comment_id: int) -> list[Reaction]:
        with self.state.lock:
            found = list(self.state.reactions.values())
        return [r for r in found if r.comment_id == comment_id]

    def issues(self, repo: str) -> list[Issue]:
        with self.state.lock:
            found = list(self.state.issues.items())
        return [i for (name, _), i in found if name == repo]
