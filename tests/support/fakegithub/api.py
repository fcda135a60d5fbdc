"""What every route shares: the per-request context, GitHub-style errors and pagination."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute

from .rules import MAX_PER_PAGE, per_page_problems
from .state import GitHubState, Repository, Token

T = TypeVar("T")
DOCS = "https://docs.github.com/rest"
DEFAULT_PER_PAGE = 30


class ApiError(Exception):
    """An answer GitHub would give instead of the resource. `violation` marks a request the
    bot should never have sent (a limit GitHub's description states in prose)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        violation: bool = False,
        errors: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.violation = violation
        self.errors = errors or []
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        body: dict[str, Any] = {"message": self.message, "documentation_url": DOCS}
        if self.errors:
            body["errors"] = [{"message": e} for e in self.errors]
        body["status"] = str(self.status)
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def unprocessable(problems: list[str]) -> ApiError:
    return ApiError(422, "Validation Failed", violation=True, errors=problems)


class LockedRoute(APIRoute):
    """A route that runs holding the state's lock, so that a test reading the state from its own
    thread never meets it half-changed. The body is read first, outside the lock: after that a
    handler does not wait on anything, so the lock is held only while it works."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def locked(request: Request) -> Response:
            await request.body()  # cached on the request: the handler's own read does not wait
            state: GitHubState = request.app.state.github
            with state.lock:
                return await handler(request)

        return locked


@dataclass
class Ctx:
    state: GitHubState
    base: str  # the fake's URL, where every `url` in a response points
    token: Token | None
    request: Request

    def repo(self, owner: str, name: str) -> Repository:
        repo = self.state.repos.get(f"{owner}/{name}")
        if repo is None or (self.token and not self._reachable(repo)):
            raise not_found()  # GitHub hides what a token cannot reach
        return repo

    def _reachable(self, repo: Repository) -> bool:
        """An installation's token writes only where the App is installed, but reads any public
        repository, as GitHub's do."""
        assert self.token is not None
        if repo.full_name in self.token.repos:
            return True
        return not repo.private and self.request.method in ("GET", "HEAD")

    def query(self, name: str, default: str | None = None) -> str | None:
        return self.request.query_params.get(name, default)

    async def body(self) -> dict[str, Any]:
        raw = await self.request.body()
        return await self.request.json() if raw else {}


def ctx(request: Request) -> Ctx:
    fake = request.app.state
    return Ctx(fake.github, fake.base_url, getattr(request.state, "token", None), request)


def _page_url(c: Ctx, page: int) -> str:
    params = dict(c.request.query_params)
    params["page"] = str(page)
    return f"{c.base}{c.request.url.path}?{urlencode(params)}"


def _link_header(c: Ctx, page: int, last: int) -> str:
    rels = []
    if page < last:
        rels += [(page + 1, "next"), (last, "last")]
    if page > 1:
        rels += [(1, "first"), (page - 1, "prev")]
    return ", ".join(f'<{_page_url(c, number)}>; rel="{rel}"' for number, rel in rels)


def paginate(
    c: Ctx, items: Sequence[T], render: Callable[[T], Any], wrap: str | None = None
) -> JSONResponse:
    """One page of `items`, with GitHub's `Link` header; `wrap` names the list inside an
    object carrying `total_count` (check runs, suites) instead of a bare array."""
    query = dict(c.request.query_params)
    problems = per_page_problems(query)
    if problems:
        raise unprocessable(problems)
    per_page = min(int(query.get("per_page", DEFAULT_PER_PAGE)) or DEFAULT_PER_PAGE, MAX_PER_PAGE)
    page = max(int(query.get("page", 1)), 1)
    last = max((len(items) + per_page - 1) // per_page, 1)
    chunk = [render(item) for item in items[(page - 1) * per_page : page * per_page]]
    body: Any = {"total_count": len(items), wrap: chunk} if wrap else chunk
    link = _link_header(c, page, last)
    return JSONResponse(body, headers={"Link": link} if link else {})
