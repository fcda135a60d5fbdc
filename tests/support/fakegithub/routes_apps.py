"""The app's own endpoints (JWT-authenticated) and the rate-limit overview."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from . import payloads
from .api import LockedRoute, ctx, not_found, paginate, unprocessable
from .auth import issue_token
from .payloads import example

router = APIRouter(route_class=LockedRoute)


@router.get("/app")
async def get_app(request: Request) -> JSONResponse:
    c = ctx(request)
    return JSONResponse(payloads.app(c.base, c.state))


@router.get("/app/installations")
async def list_installations(request: Request) -> JSONResponse:
    c = ctx(request)
    installs = sorted(c.state.installations.values(), key=lambda i: i.id)
    return paginate(c, installs, lambda i: payloads.installation(c.base, c.state, i))


@router.get("/app/installations/{installation_id}")
async def get_installation(request: Request, installation_id: int) -> JSONResponse:
    c = ctx(request)
    inst = c.state.installations.get(installation_id)
    if inst is None:
        raise not_found()
    return JSONResponse(payloads.installation(c.base, c.state, inst))


@router.post("/app/installations/{installation_id}/access_tokens")
async def create_token(request: Request, installation_id: int) -> JSONResponse:
    c = ctx(request)
    inst = c.state.installations.get(installation_id)
    if inst is None:
        raise not_found()
    body = await c.body()
    repos = list(inst.repos)
    if body.get("repositories"):
        wanted = [f"{inst.account}/{name}" for name in body["repositories"]]
        unknown = [name for name in wanted if name not in inst.repos]
        if unknown:
            raise unprocessable(
                [f"repository {name} is not in this installation" for name in unknown]
            )
        repos = wanted
    if body.get("repository_ids"):
        ids = set(body["repository_ids"])
        repos = [r for r in repos if c.state.repos[r].id in ids]
    tok = issue_token(c.state, installation_id, c.state.token_lifetime, repos)
    return JSONResponse(payloads.token(c.base, c.state, tok), status_code=201)


@router.get("/repos/{owner}/{repo}/installation")
async def get_repo_installation(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    inst = c.state.installation_for(f"{owner}/{repo}")
    if inst is None:
        raise not_found()
    return JSONResponse(payloads.installation(c.base, c.state, inst))


@router.get("/rate_limit")
async def rate_limit(request: Request) -> JSONResponse:
    body = example("rate-limit-overview")
    reset = int(time.time()) + 3600
    for bucket in [*body["resources"].values(), body["rate"]]:
        bucket["reset"] = reset
    return JSONResponse(body)
