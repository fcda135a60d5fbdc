"""Pull requests: listing, files, commits, reviews and review comments."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from . import payloads, payloads_git, payloads_issues
from .api import Ctx, LockedRoute, ctx, not_found, paginate, unprocessable
from .rules import diff_lines, review_problems
from .state import PullRequest, Review, ReviewComment, now

router = APIRouter(route_class=LockedRoute)
REVIEW_STATE = {
    "APPROVE": "APPROVED",
    "REQUEST_CHANGES": "CHANGES_REQUESTED",
    "COMMENT": "COMMENTED",
}
PULL_BASE = "/repos/{owner}/{repo}/pulls/{pull_number}"


def _pull(c: Ctx, owner: str, repo: str, number: int) -> PullRequest:
    c.repo(owner, repo)
    pr = c.state.pulls.get((f"{owner}/{repo}", number))
    if pr is None:
        raise not_found()
    return pr


def _matches(pr: PullRequest, owner: str, state: str, base: str | None, head: str | None) -> bool:
    if state != "all" and pr.state != state:
        return False
    if base and pr.base_ref != base:
        return False
    return not head or head in (f"{owner}:{pr.head_ref}", pr.head_ref)


@router.get("/repos/{owner}/{repo}/pulls")
async def list_pulls(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    c.repo(owner, repo)
    state, base, head = c.query("state", "open") or "open", c.query("base"), c.query("head")
    pulls = [
        pr
        for (name, _), pr in c.state.pulls.items()
        if name == f"{owner}/{repo}" and _matches(pr, owner, state, base, head)
    ]
    pulls.sort(key=lambda pr: (pr.created_at, pr.number), reverse=c.query("direction") != "asc")
    return paginate(c, pulls, lambda pr: payloads.pull(c.base, c.state, pr))


@router.get(PULL_BASE)
async def get_pull(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
    c = ctx(request)
    return JSONResponse(payloads.pull(c.base, c.state, _pull(c, owner, repo, pull_number)))


@router.get(PULL_BASE + "/files")
async def list_files(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    target = c.state.repos[pr.repo]
    return paginate(c, pr.files, lambda f: payloads_git.diff_entry(c.base, target, pr.head_sha, f))


@router.get(PULL_BASE + "/commits")
async def list_commits(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    target = c.state.repos[pr.repo]
    shas = pr.commits or [pr.head_sha]
    return paginate(c, shas, lambda sha: payloads_git.commit(c.base, target, sha))


def _placement_problems(pr: PullRequest, index: int, comment: dict[str, Any]) -> list[str]:
    """GitHub refuses inline comments on files or lines outside the PR's diff."""
    if not pr.files or comment.get("position") is not None:
        return []
    changed = next((f for f in pr.files if f.filename == comment.get("path")), None)
    if changed is None:
        return [f"comments[{index}]: path {comment.get('path')!r} is not part of the diff"]
    line, side = comment.get("line"), comment.get("side") or "RIGHT"
    if changed.patch is not None and line not in diff_lines(changed.patch, side):
        return [f"comments[{index}]: line {line} ({side}) must be part of the diff"]
    return []


def _add_comment(c: Ctx, pr: PullRequest, review_id: int | None, raw: dict[str, Any]) -> Any:
    comment = ReviewComment(
        id=c.state.next_id(),
        repo=pr.repo,
        pull_number=pr.number,
        review_id=review_id,
        path=raw["path"],
        body=raw["body"],
        commit_id=raw.get("commit_id") or pr.head_sha,
        user=c.state.bot_login,
        line=raw.get("line"),
        side=raw.get("side") or "RIGHT",
        start_line=raw.get("start_line"),
        start_side=raw.get("start_side"),
    )
    c.state.review_comments[comment.id] = comment
    return comment


@router.post(PULL_BASE + "/reviews")
async def create_review(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    body = await c.body()
    comments = body.get("comments") or []
    problems = review_problems(body)
    for index, comment in enumerate(comments):
        problems += _placement_problems(pr, index, comment)
    if problems:
        raise unprocessable(problems)
    event = body.get("event")
    review = Review(
        id=c.state.next_id(),
        repo=pr.repo,
        pull_number=pr.number,
        user=c.state.bot_login,
        body=body.get("body") or "",
        state=REVIEW_STATE.get(event or "", "PENDING"),
        commit_id=body.get("commit_id") or pr.head_sha,
        submitted_at=now() if event else None,
    )
    c.state.reviews[review.id] = review
    for comment in comments:
        _add_comment(c, pr, review.id, {**comment, "commit_id": review.commit_id})
    return JSONResponse(payloads_issues.review(c.base, c.state, review))


@router.get(PULL_BASE + "/reviews")
async def list_reviews(request: Request, owner: str, repo: str, pull_number: int) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    found = [r for r in c.state.reviews.values() if (r.repo, r.pull_number) == (pr.repo, pr.number)]
    return paginate(c, found, lambda r: payloads_issues.review(c.base, c.state, r))


@router.get(PULL_BASE + "/reviews/{review_id}")
async def get_review(
    request: Request, owner: str, repo: str, pull_number: int, review_id: int
) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    review = c.state.reviews.get(review_id)
    if review is None or (review.repo, review.pull_number) != (pr.repo, pr.number):
        raise not_found()
    return JSONResponse(payloads_issues.review(c.base, c.state, review))


@router.get(PULL_BASE + "/comments")
async def list_review_comments(
    request: Request, owner: str, repo: str, pull_number: int
) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    found = [
        rc
        for rc in c.state.review_comments.values()
        if (rc.repo, rc.pull_number) == (pr.repo, pr.number)
    ]
    return paginate(c, found, lambda rc: payloads_issues.review_comment(c.base, c.state, rc))


@router.post(PULL_BASE + "/comments")
async def create_review_comment(
    request: Request, owner: str, repo: str, pull_number: int
) -> JSONResponse:
    c = ctx(request)
    pr = _pull(c, owner, repo, pull_number)
    body = await c.body()
    problems = _placement_problems(pr, 0, body)
    if problems:
        raise unprocessable(problems)
    comment = _add_comment(c, pr, None, body)
    return JSONResponse(payloads_issues.review_comment(c.base, c.state, comment), status_code=201)


def _review_comment(c: Ctx, owner: str, repo: str, comment_id: int) -> ReviewComment:
    c.repo(owner, repo)
    comment = c.state.review_comments.get(comment_id)
    if comment is None or comment.repo != f"{owner}/{repo}":
        raise not_found()
    return comment


@router.patch("/repos/{owner}/{repo}/pulls/comments/{comment_id}")
async def update_review_comment(
    request: Request, owner: str, repo: str, comment_id: int
) -> JSONResponse:
    c = ctx(request)
    comment = _review_comment(c, owner, repo, comment_id)
    comment.body = (await c.body())["body"]
    comment.updated_at = now()
    return JSONResponse(payloads_issues.review_comment(c.base, c.state, comment))


@router.delete("/repos/{owner}/{repo}/pulls/comments/{comment_id}")
async def delete_review_comment(
    request: Request, owner: str, repo: str, comment_id: int
) -> Response:
    c = ctx(request)
    comment = _review_comment(c, owner, repo, comment_id)
    del c.state.review_comments[comment.id]
    return Response(status_code=204)
