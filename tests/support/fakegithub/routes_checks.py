"""Check runs, their annotations and check suites."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from . import payloads_git
from .api import Ctx, LockedRoute, ctx, not_found, paginate, unprocessable
from .rules import check_run_problems
from .state import CheckRun, Repository, now

router = APIRouter(route_class=LockedRoute)
RUN_PATH = "/repos/{owner}/{repo}/check-runs/{check_run_id}"


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _apply(run: CheckRun, body: dict[str, Any]) -> None:
    """Apply a create or update body; output annotations accumulate, as on GitHub."""
    for key in ("name", "details_url", "external_id", "status"):
        if key in body:
            setattr(run, key, body[key])
    if "started_at" in body:
        run.started_at = _when(body["started_at"])
    if run.status == "in_progress" and run.started_at is None:
        run.started_at = now()
    if body.get("conclusion"):
        # Sending a conclusion completes the run (rest-limits.md, checks/create).
        run.conclusion, run.status = body["conclusion"], "completed"
        run.completed_at = _when(body.get("completed_at")) or now()
    output = body.get("output") or {}
    for key in ("title", "summary", "text"):
        if key in output:
            setattr(run, key, output[key])
    run.annotations.extend(output.get("annotations") or [])


def _run(c: Ctx, owner: str, repo: str, check_run_id: int) -> CheckRun:
    c.repo(owner, repo)
    run = c.state.check_runs.get(check_run_id)
    if run is None or run.repo != f"{owner}/{repo}":
        raise not_found()
    return run


def _sha(c: Ctx, repo: Repository, ref: str) -> str:
    sha = c.state.resolve_ref(repo, ref)
    if sha is None:
        raise not_found()
    return sha


@router.post("/repos/{owner}/{repo}/check-runs")
async def create_check_run(request: Request, owner: str, repo: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    body = await c.body()
    problems = check_run_problems(body, creating=True)
    if problems:
        raise unprocessable(problems)
    run = CheckRun(
        id=c.state.next_id(),
        repo=target.full_name,
        name=body["name"],
        head_sha=body["head_sha"],
        suite_id=c.state.suite_id(target.full_name, body["head_sha"]),
        started_at=now(),
    )
    _apply(run, body)
    c.state.check_runs[run.id] = run
    return JSONResponse(payloads_git.check_run(c.base, c.state, run), status_code=201)


@router.patch(RUN_PATH)
async def update_check_run(
    request: Request, owner: str, repo: str, check_run_id: int
) -> JSONResponse:
    c = ctx(request)
    run = _run(c, owner, repo, check_run_id)
    body = await c.body()
    problems = check_run_problems(body, creating=False)
    if problems:
        raise unprocessable(problems)
    _apply(run, body)
    return JSONResponse(payloads_git.check_run(c.base, c.state, run))


@router.get(RUN_PATH)
async def get_check_run(request: Request, owner: str, repo: str, check_run_id: int) -> JSONResponse:
    c = ctx(request)
    return JSONResponse(payloads_git.check_run(c.base, c.state, _run(c, owner, repo, check_run_id)))


@router.get(RUN_PATH + "/annotations")
async def list_annotations(
    request: Request, owner: str, repo: str, check_run_id: int
) -> JSONResponse:
    c = ctx(request)
    run = _run(c, owner, repo, check_run_id)
    return paginate(c, run.annotations, lambda note: payloads_git.annotation(c.base, run, note))


def _latest_per_name(runs: list[CheckRun]) -> list[CheckRun]:
    latest: dict[str, CheckRun] = {}
    for run in sorted(runs, key=lambda r: r.id):
        latest[run.name] = run
    return list(latest.values())


@router.get("/repos/{owner}/{repo}/commits/{ref}/check-runs")
async def list_for_ref(request: Request, owner: str, repo: str, ref: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    sha = _sha(c, target, ref)
    runs = [
        r for r in c.state.check_runs.values() if (r.repo, r.head_sha) == (target.full_name, sha)
    ]
    if c.query("check_name"):
        runs = [r for r in runs if r.name == c.query("check_name")]
    if c.query("status"):
        runs = [r for r in runs if r.status == c.query("status")]
    if c.query("app_id") and c.query("app_id") != str(c.state.app_id):
        runs = []  # every run on the fake is this app's
    if c.query("filter", "latest") == "latest":
        runs = _latest_per_name(runs)
    runs.sort(key=lambda r: r.id, reverse=True)
    render = lambda r: payloads_git.check_run(c.base, c.state, r)  # noqa: E731
    return paginate(c, runs, render, wrap="check_runs")


@router.get("/repos/{owner}/{repo}/commits/{ref}/check-suites")
async def list_suites(request: Request, owner: str, repo: str, ref: str) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    sha = _sha(c, target, ref)
    suites = [
        s for (name, head), s in c.state.suites.items() if (name, head) == (target.full_name, sha)
    ]
    render = lambda s: payloads_git.check_suite(c.base, c.state, target, sha, s)  # noqa: E731
    return paginate(c, suites, render, wrap="check_suites")


@router.get("/repos/{owner}/{repo}/check-suites/{check_suite_id}")
async def get_suite(request: Request, owner: str, repo: str, check_suite_id: int) -> JSONResponse:
    c = ctx(request)
    target = c.repo(owner, repo)
    found = [
        sha
        for (name, sha), s in c.state.suites.items()
        if name == target.full_name and s == check_suite_id
    ]
    if not found:
        raise not_found()
    return JSONResponse(payloads_git.check_suite(c.base, c.state, target, found[0], check_suite_id))
