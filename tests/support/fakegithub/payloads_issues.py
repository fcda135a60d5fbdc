"""Response bodies for issues, conversation comments, reviews, review comments, reactions."""

from __future__ import annotations

import zlib

from .payloads import EXAMPLE_REPO, WEB_HOST, Json, example, number_subs, rewrite, user
from .state import (
    GitHubState,
    Issue,
    IssueComment,
    PullRequest,
    Reaction,
    Review,
    ReviewComment,
    iso,
)


def _label(base: str, repo: str, name: str) -> Json:
    return {
        "id": zlib.crc32(name.encode()),  # stable across runs, unlike hash()
        "node_id": f"LA_{name}",
        "name": name,
        "url": f"{base}/repos/{repo}/labels/{name}",
        "description": None,
        "color": "ededed",
        "default": False,
    }


def issue(base: str, state: GitHubState, item: Issue | PullRequest) -> Json:
    body: Json = rewrite(example("issue"), number_subs(base, item.repo, "1347", item.number))
    is_pull = isinstance(item, PullRequest)
    updated = item.updated_at if isinstance(item, Issue) else item.created_at
    labels = item.labels if isinstance(item, Issue) else []
    body.update(
        id=item.id,
        node_id=f"I_{item.id}",
        number=item.number,
        title=item.title,
        body=item.body,
        state=item.state,
        user=user(base, state, item.user),
        labels=[_label(base, item.repo, name) for name in labels],
        assignee=None,
        assignees=[],
        milestone=None,
        locked=False,
        active_lock_reason=None,
        closed_by=None,
        comments=sum(
            1
            for c in state.issue_comments.values()
            if (c.repo, c.issue_number) == (item.repo, item.number)
        ),
        created_at=iso(item.created_at),
        updated_at=iso(updated),
        closed_at=iso(updated) if item.state == "closed" else None,
        author_association="CONTRIBUTOR",
    )
    body.pop("pull_request", None)
    if is_pull:
        body["pull_request"] = {
            "url": f"{base}/repos/{item.repo}/pulls/{item.number}",
            "html_url": f"{WEB_HOST}/{item.repo}/pull/{item.number}",
            "diff_url": f"{WEB_HOST}/{item.repo}/pull/{item.number}.diff",
            "patch_url": f"{WEB_HOST}/{item.repo}/pull/{item.number}.patch",
            "merged_at": None,
        }
    return body


def issue_comment(base: str, state: GitHubState, comment: IssueComment) -> Json:
    body: Json = rewrite(example("issue-comment"), {EXAMPLE_REPO: comment.repo})
    body.update(
        id=comment.id,
        node_id=f"IC_{comment.id}",
        url=f"{base}/repos/{comment.repo}/issues/comments/{comment.id}",
        html_url=f"{WEB_HOST}/{comment.repo}/issues/{comment.issue_number}"
        f"#issuecomment-{comment.id}",
        issue_url=f"{base}/repos/{comment.repo}/issues/{comment.issue_number}",
        body=comment.body,
        user=user(base, state, comment.user),
        created_at=iso(comment.created_at),
        updated_at=iso(comment.updated_at),
        author_association="NONE",
    )
    return body


def review(base: str, state: GitHubState, item: Review) -> Json:
    pull_url = f"{base}/repos/{item.repo}/pulls/{item.pull_number}"
    html = f"{WEB_HOST}/{item.repo}/pull/{item.pull_number}#pullrequestreview-{item.id}"
    body: Json = example("pull-request-review")
    body.update(
        id=item.id,
        node_id=f"PRR_{item.id}",
        user=user(base, state, item.user),
        body=item.body,
        state=item.state,
        html_url=html,
        pull_request_url=pull_url,
        _links={"html": {"href": html}, "pull_request": {"href": pull_url}},
        commit_id=item.commit_id,
        author_association="NONE",
    )
    body.pop("submitted_at")
    if item.submitted_at:
        body["submitted_at"] = iso(item.submitted_at)
    return body


def review_comment(base: str, state: GitHubState, item: ReviewComment) -> Json:
    url = f"{base}/repos/{item.repo}/pulls/comments/{item.id}"
    pull_url = f"{base}/repos/{item.repo}/pulls/{item.pull_number}"
    html = f"{WEB_HOST}/{item.repo}/pull/{item.pull_number}#discussion_r{item.id}"
    body: Json = example("pull-request-review-comment-2")
    body.pop("in_reply_to_id", None)
    body.update(
        url=url,
        pull_request_review_id=item.review_id,
        id=item.id,
        node_id=f"PRRC_{item.id}",
        path=item.path,
        position=None,
        original_position=None,
        commit_id=item.commit_id,
        original_commit_id=item.commit_id,
        user=user(base, state, item.user),
        body=item.body,
        created_at=iso(item.created_at),
        updated_at=iso(item.updated_at),
        html_url=html,
        pull_request_url=pull_url,
        author_association="NONE",
        _links={"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull_url}},
        line=item.line,
        original_line=item.line,
        side=item.side,
        start_line=item.start_line,
        original_start_line=item.start_line,
        start_side=item.start_side,
        subject_type="line",
    )
    return body


def reaction(base: str, state: GitHubState, item: Reaction) -> Json:
    return {
        "id": item.id,
        "node_id": f"REA_{item.id}",
        "user": user(base, state, item.user),
        "content": item.content,
        "created_at": iso(item.created_at),
    }
