"""Repositories, branches, refs, commits, contents, archives and collaborators."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from . import payloads, payloads_git
from .api import ApiError, Ctx, LockedRoute, ctx, not_found, paginate
from .state import Repository

router = APIRouter(route_class=LockedRoute)
REPO = "/repos/{owner}/{repo}"
# Where GitHub's tarball redirect points (codeload.github.com on the real service). It is not
# part of the REST API, so the fake serves it outside the description and without a token.
CODELOAD_PREFIX = "/_codeload/"
READ_ROLES = ("admin", "maintain", "write", "triage", "read")


def _sha(c: Ctx, repo: Repository, ref: str) -> str:
    sha = c.state.resolve_ref(repo, ref)
    if sha is None:
        raise ApiError(404, f"No commit found for the ref {ref}")
    return sha


@router.get(REPO)
async def get_repo(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    return JSONResponse(payloads.repository(c.base, c.state, c.repo(owner, repo), full=True))


@router.get(REPO + "/branches")
async def list_branches(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    items = sorted(target.branches.items())
    render = lambda kv: payloads_git.short_branch(c.base, target, *kv)  # noqa: E731
    return paginate(c, items, render)


@router.get(REPO + "/branches/{branch:path}")
async def get_branch(request: Request, owner: str, repo: str, branch: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    if branch not in target.branches:
        raise ApiError(404, "Branch not found")
    return JSONResponse(payloads_git.branch(c.base, target, branch, target.branches[branch]))


def _refs(repo: Repository) -> dict[str, str]:
    heads = {f"heads/{name}": sha for name, sha in repo.branches.items()}
    return heads | {f"tags/{name}": sha for name, sha in repo.tags.items()}


@router.get(REPO + "/git/ref/{ref:path}")
async def get_ref(request: Request, owner: str, repo: str, ref: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    sha = _refs(target).get(ref)
    if sha is None:
        raise not_found()
    return JSONResponse(payloads_git.git_ref(c.base, target, ref, sha))


@router.get(REPO + "/git/matching-refs/{ref:path}")
async def matching_refs(request: Request, owner: str, repo: str, ref: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    found = sorted((name, sha) for name, sha in _refs(target).items() if name.startswith(ref))
    return JSONResponse([payloads_git.git_ref(c.base, target, name, sha) for name, sha in found])


@router.get(REPO + "/commits/{ref}")
async def get_commit(request: Request, owner: str, repo: str, ref: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    return JSONResponse(payloads_git.commit(c.base, target, _sha(c, target, ref)))


@router.get(REPO + "/compare/{basehead:path}")
async def compare(request: Request, owner: str, repo: str, basehead: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    base_ref, dots, head_ref = basehead.partition("...")
    if not dots:
        raise not_found()
    base_sha = _sha(c, target, base_ref.split(":")[-1])
    head_sha = _sha(c, target, head_ref.split(":")[-1])
    return JSONResponse(payloads_git.comparison(c.base, target, base_sha, head_sha))


def _file(c: Ctx, repo: Repository, path: str, ref: str) -> bytes | None:
    sha = c.state.resolve_ref(repo, ref)
    return repo.files.get((ref, path)) or (repo.files.get((sha, path)) if sha else None)


@router.get(REPO + "/contents/{path:path}")
async def get_contents(request: Request, owner: str, repo: str, path: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    ref = c.query("ref") or target.default_branch
    data = _file(c, target, path, ref)
    if data is None:
        raise not_found()
    return JSONResponse(payloads.content_file(c.base, target, path, ref, data))


@router.get(REPO + "/tarball/{ref}")
async def tarball(request: Request, owner: str, repo: str, ref: str) -> Response:
    c = ctx(request)
    target = c.repo(owner, repo)
    sha = _sha(c, target, ref)
    return RedirectResponse(f"{c.base}{CODELOAD_PREFIX}{target.full_name}/tar.gz/{sha}", 302)


@router.get(CODELOAD_PREFIX + "{owner}/{repo}/tar.gz/{sha}")
async def codeload(request: Request, owner: str, repo: str, sha: str) -> Response:
    """`git archive` of the local repository the test set as the repo's clone_url."""
    target = ctx(request).state.repos.get(f"{owner}/{repo}")
    if target is None or not Path(target.clone_url).exists():
        raise not_found()
    prefix = f"{owner}-{repo}-{sha[:7]}/"
    archive = subprocess.run(
        ["git", "-C", target.clone_url, "archive", "--format=tar.gz", f"--prefix={prefix}", sha],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        raise not_found()
    return Response(archive.stdout, media_type="application/x-gzip")


def _role(c: Ctx, repo: Repository, login: str) -> str:
    default = "none" if repo.private else "read"  # anyone may read a public repository
    return c.state.permissions.get((repo.full_name, login), default)


@router.get(REPO + "/collaborators/{username}/permission")
async def permission(request: Request, owner: str, repo: str, username: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    role = _role(c, target, username)
    return JSONResponse(payloads.permission(c.base, c.state, username, role))


@router.get(REPO + "/collaborators/{username}")
async def check_collaborator(request: Request, owner: str, repo: str, username: str) -> Response:
    c = ctx(request)
    target = c.repo(owner, repo)
    explicit = c.state.permissions.get((target.full_name, username))
    return Response(status_code=204 if explicit in READ_ROLES else 404)
