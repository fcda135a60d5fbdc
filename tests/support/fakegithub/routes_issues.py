"""Issues (the release board), conversation comments and their reactions.

Routes under `/issues/comments` come before `/issues/{issue_number}` so that "comments" is
never read as an issue number.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from . import payloads_issues
from .api import Ctx, LockedRoute, ctx, not_found, paginate
from .state import Issue, IssueComment, PullRequest, Reaction, iso, now

router = APIRouter(route_class=LockedRoute)
REPO = "/repos/{owner}/{repo}"


def _comment(c: Ctx, owner: str, repo: str, comment_id: int) -> IssueComment:
    c.repo(owner, repo)
    comment = c.state.issue_comments.get(comment_id)
    if comment is None or comment.repo != f"{owner}/{repo}":
        raise not_found()
    return comment


def _issue_or_pull(c: Ctx, owner: str, repo: str, number: int) -> Issue | PullRequest:
    c.repo(owner, repo)
    key = (f"{owner}/{repo}", number)
    found = c.state.issues.get(key) or c.state.pulls.get(key)
    if found is None:
        raise not_found()
    return found


def _since(c: Ctx, comments: list[IssueComment]) -> list[IssueComment]:
    since = c.query("since")
    if not since:
        return comments
    return [x for x in comments if (iso(x.updated_at) or "") >= since.replace("+00:00", "Z")]


@router.get(REPO + "/issues/comments")
async def list_repo_comments(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    c.repo(owner, repo)
    found = [x for x in c.state.issue_comments.values() if x.repo == f"{owner}/{repo}"]
    found.sort(key=lambda x: x.id, reverse=c.query("direction") == "desc")
    return paginate(
        c, _since(c, found), lambda x: payloads_issues.issue_comment(c.base, c.state, x)
    )


@router.get(REPO + "/issues/comments/{comment_id}")
async def get_comment(request: Request, owner: str, repo: str, comment_id: int) -> JSONResponse:
    c = ctx(request)
    comment = _comment(c, owner, repo, comment_id)
    return JSONResponse(payloads_issues.issue_comment(c.base, c.state, comment))


@router.patch(REPO + "/issues/comments/{comment_id}")
async def update_comment(request: Request, owner: str, repo: str, comment_id: int) -> JSONResponse:
    c = ctx(request)
    comment = _comment(c, owner, repo, comment_id)
    comment.body = (await c.body())["body"]
    comment.updated_at = now()
    return JSONResponse(payloads_issues.issue_comment(c.base, c.state, comment))


@router.post(REPO + "/issues/comments/{comment_id}/reactions")
async def create_reaction(request: Request, owner: str, repo: str, comment_id: int) -> JSONResponse:
    c = ctx(request)
    comment = _comment(c, owner, repo, comment_id)
    content = (await c.body())["content"]
    for existing in c.state.reactions.values():
        if (existing.comment_id, existing.content, existing.user) == (
            comment.id,
            content,
            c.state.bot_login,
        ):
            return JSONResponse(
                payloads_issues.reaction(c.base, c.state, existing), status_code=200
            )
    made = Reaction(c.state.next_id(), comment.id, content, c.state.bot_login)
    c.state.reactions[made.id] = made
    return JSONResponse(payloads_issues.reaction(c.base, c.state, made), status_code=201)


def _issue_matches(c: Ctx, item: Issue | PullRequest) -> bool:
    state = c.query("state", "open")
    if state != "all" and item.state != state:
        return False
    if c.query("creator") and item.user != c.query("creator"):
        return False
    wanted = [w for w in (c.query("labels") or "").split(",") if w]
    labels = item.labels if isinstance(item, Issue) else []
    return all(w in labels for w in wanted)


@router.get(REPO + "/issues")
async def list_issues(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    c.repo(owner, repo)
    name = f"{owner}/{repo}"
    # GitHub lists pull requests among issues (marked by a `pull_request` key).
    every: list[Issue | PullRequest] = [*c.state.issues.values(), *c.state.pulls.values()]
    found = [x for x in every if x.repo == name and _issue_matches(c, x)]
    found.sort(key=lambda x: x.number, reverse=c.query("direction", "desc") == "desc")
    return paginate(c, found, lambda x: payloads_issues.issue(c.base, c.state, x))


@router.post(REPO + "/issues")
async def create_issue(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    c.repo(owner, repo)
    body = await c.body()
    name = f"{owner}/{repo}"
    labels = [x if isinstance(x, str) else x["name"] for x in body.get("labels") or []]
    issue = Issue(
        repo=name,
        number=c.state.next_number(name),
        id=c.state.next_id(),
        title=str(body["title"]),
        user=c.state.bot_login,
        body=body.get("body"),
        labels=labels,
    )
    c.state.issues[(name, issue.number)] = issue
    return JSONResponse(payloads_issues.issue(c.base, c.state, issue), status_code=201)


@router.get(REPO + "/issues/{issue_number}")
async def get_issue(request: Request, owner: str, repo: str, issue_number: int) -> JSONResponse:
    c = ctx(request)
    item = _issue_or_pull(c, owner, repo, issue_number)
    return JSONResponse(payloads_issues.issue(c.base, c.state, item))


@router.patch(REPO + "/issues/{issue_number}")
async def update_issue(request: Request, owner: str, repo: str, issue_number: int) -> JSONResponse:
    c = ctx(request)
    item = _issue_or_pull(c, owner, repo, issue_number)
    body = await c.body()
    for key in ("title", "body", "state"):
        if key in body and body[key] is not None:
            setattr(item, key, str(body[key]))
    if isinstance(item, Issue):
        if "labels" in body:
            item.labels = [x if isinstance(x, str) else x["name"] for x in body["labels"]]
        item.updated_at = now()
    return JSONResponse(payloads_issues.issue(c.base, c.state, item))


@router.get(REPO + "/issues/{issue_number}/comments")
async def list_comments(request: Request, owner: str, repo: str, issue_number: int) -> JSONResponse:
    c = ctx(request)
    item = _issue_or_pull(c, owner, repo, issue_number)
    found = [
        x
        for x in c.state.issue_comments.values()
        if (x.repo, x.issue_number) == (item.repo, item.number)
    ]
    found.sort(key=lambda x: x.id)
    return paginate(
        c, _since(c, found), lambda x: payloads_issues.issue_comment(c.base, c.state, x)
    )


@router.post(REPO + "/issues/{issue_number}/comments")
async def create_comment(
    request: Request, owner: str, repo: str, issue_number: int
) -> JSONResponse:
    c = ctx(request)
    item = _issue_or_pull(c, owner, repo, issue_number)
    comment = IssueComment(
        id=c.state.next_id(),
        repo=item.repo,
        issue_number=item.number,
        body=(await c.body())["body"],
        user=c.state.bot_login,
    )
    c.state.issue_comments[comment.id] = comment
    return JSONResponse(payloads_issues.issue_comment(c.base, c.state, comment), status_code=201)
