"""Response bodies shaped like GitHub's: the description's examples, refilled from state.

Starting from `components.examples` keeps every field a client might read (and the response
schemas satisfied); the values that matter are then overwritten from the fake's state, and the
example's API host is replaced by the fake's URL so that clients following `url` come back here.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from .openapi_check import GITHUB_HOST, spec_document
from .state import (
    GitHubState,
    Installation,
    PullRequest,
    Repository,
    Token,
    iso,
)

Json = dict[str, Any]
WEB_HOST = "https://github.com"
EXAMPLE_REPO = "octocat/Hello-World"
# GitHub reports the legacy base role in `permission`; `role_name` keeps the real one.
LEGACY_PERMISSION = {"maintain": "write", "triage": "read"}


def example(name: str) -> Any:
    return copy.deepcopy(spec_document()["components"]["examples"][name]["value"])


def rewrite(value: Any, subs: dict[str, str]) -> Any:
    """Replace substrings in every string of a JSON value, in the order given."""
    if isinstance(value, dict):
        return {key: rewrite(item, subs) for key, item in value.items()}
    if isinstance(value, list):
        return [rewrite(item, subs) for item in value]
    if isinstance(value, str):
        for old, new in subs.items():
            value = value.replace(old, new)
    return value


def from_example(name: str, base: str, full_name: str, old: str = EXAMPLE_REPO) -> Any:
    return rewrite(example(name), {old: full_name, GITHUB_HOST: base})


def user(base: str, state: GitHubState, login: str) -> Json:
    template = example("pull-request")["user"]
    body: Json = rewrite(template, {"octocat": login, GITHUB_HOST: base})
    body.update(
        login=login,
        id=state.user_id(login),
        type="Bot" if login.endswith("[bot]") else "User",
    )
    return body


def repository(base: str, state: GitHubState, repo: Repository, full: bool = False) -> Json:
    if full:
        body = from_example("full-repository-default-response", base, repo.full_name)
        for optional in ("parent", "source", "template_repository", "organization"):
            body.pop(optional, None)
        body.update(license=None, language=None)
    else:
        body = rewrite(example("pull-request")["head"]["repo"], {EXAMPLE_REPO: repo.full_name})
        body = rewrite(body, {GITHUB_HOST: base})
        body["license"] = None
    body.update(
        id=repo.id,
        node_id=f"R_{repo.id}",
        name=repo.name,
        full_name=repo.full_name,
        owner=user(base, state, repo.owner),
        private=repo.private,
        visibility="private" if repo.private else "public",
        url=f"{base}/repos/{repo.full_name}",
        html_url=f"{WEB_HOST}/{repo.full_name}",
        clone_url=repo.clone_url or f"{WEB_HOST}/{repo.full_name}.git",
        default_branch=repo.default_branch,
        fork=False,
        topics=[],
    )
    return body


def app(base: str, state: GitHubState) -> Json:
    body: Json = from_example("integration", base, "")
    body.update(
        id=state.app_id,
        slug=state.app_slug,
        name=state.app_slug,
        html_url=f"{WEB_HOST}/apps/{state.app_slug}",
        owner=user(base, state, "chart-review-org"),
        permissions={
            "checks": "write",
            "contents": "read",
            "issues": "write",
            "metadata": "read",
            "pull_requests": "write",
        },
        events=["check_run", "check_suite", "issue_comment", "pull_request", "push"],
    )
    return body


def installation(base: str, state: GitHubState, inst: Installation) -> Json:
    body: Json = rewrite(example("installation"), {GITHUB_HOST: base})
    body.update(
        id=inst.id,
        account=user(base, state, inst.account),
        access_tokens_url=f"{base}/app/installations/{inst.id}/access_tokens",
        repositories_url=f"{base}/installation/repositories",
        repository_selection="selected",
        app_id=state.app_id,
        app_slug=state.app_slug,
        target_id=state.user_id(inst.account),
        target_type="User",
        permissions=app(base, state)["permissions"],
        events=app(base, state)["events"],
    )
    return body


def token(base: str, state: GitHubState, tok: Token) -> Json:
    return {
        "token": tok.token,
        "expires_at": iso(tok.expires_at),
        "permissions": app(base, state)["permissions"],
        "repository_selection": "selected",
    }


def number_subs(base: str, full_name: str, old_number: str, number: int) -> dict[str, str]:
    subs = {f"/{kind}/{old_number}": f"/{kind}/{number}" for kind in ("pulls", "issues", "pull")}
    return {EXAMPLE_REPO: full_name, GITHUB_HOST: base, **subs}


def _ref(base: str, state: GitHubState, repo: Repository, ref: str, sha: str) -> Json:
    return {
        "label": f"{repo.owner}:{ref}",
        "ref": ref,
        "sha": sha,
        "user": user(base, state, repo.owner),
        "repo": repository(base, state, repo),
    }


def pull(base: str, state: GitHubState, pr: PullRequest) -> Json:
    repo = state.repos[pr.repo]
    body: Json = rewrite(example("pull-request"), number_subs(base, pr.repo, "1347", pr.number))
    closed = pr.state == "closed"
    body.update(
        id=pr.id,
        node_id=f"PR_{pr.id}",
        number=pr.number,
        state=pr.state,
        locked=False,
        title=pr.title,
        body=pr.body,
        user=user(base, state, pr.user),
        labels=[],
        milestone=None,
        assignee=None,
        assignees=[],
        requested_reviewers=[],
        requested_teams=[],
        active_lock_reason=None,
        created_at=iso(pr.created_at),
        updated_at=iso(pr.created_at),
        closed_at=iso(pr.created_at) if closed else None,
        merged_at=iso(pr.created_at) if pr.merged else None,
        merge_commit_sha=None,
        merged=pr.merged,
        merged_by=None,
        mergeable=None,  # GitHub computes it in the background; clients must cope with null
        draft=pr.draft,
        statuses_url=f"{base}/repos/{pr.repo}/statuses/{pr.head_sha}",
        head=_ref(base, state, repo, pr.head_ref, pr.head_sha),
        base=_ref(base, state, repo, pr.base_ref, pr.base_sha),
        author_association="CONTRIBUTOR",
        auto_merge=None,
        commits=len(pr.commits) or 1,
        changed_files=len(pr.files),
        additions=sum(f.additions for f in pr.files),
        deletions=sum(f.deletions for f in pr.files),
        comments=sum(
            1
            for c in state.issue_comments.values()
            if (c.repo, c.issue_number) == (pr.repo, pr.number)
        ),
        review_comments=sum(
            1
            for c in state.review_comments.values()
            if (c.repo, c.pull_number) == (pr.repo, pr.number)
        ),
    )
    return body


def permission(base: str, state: GitHubState, login: str, role: str) -> Json:
    who = user(base, state, login)
    who["role_name"] = role  # the schema requires it here; the example omits it
    return {"permission": LEGACY_PERMISSION.get(role, role), "role_name": role, "user": who}


def content_file(base: str, repo: Repository, path: str, ref: str, data: bytes) -> Json:
    body: Json = from_example(
        "content-file-response-if-content-is-a-file", base, repo.full_name, "octokit/octokit.rb"
    )
    url = f"{base}/repos/{repo.full_name}/contents/{path}?ref={ref}"
    body.update(
        type="file",
        encoding="base64",
        size=len(data),
        name=path.rsplit("/", 1)[-1],
        path=path,
        content=base64.b64encode(data).decode(),
        url=url,
        _links={**body["_links"], "self": url},
    )
    return body
