"""The fake GitHub REST server: a FastAPI app on loopback, served by uvicorn in a thread.

Every request passes one gate before its route: it is checked against GitHub's REST
description (off-spec requests are answered 400/404/422 and recorded as violations), then
against injected faults, then against the app's credentials. Every request is logged.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from . import routes_apps, routes_checks, routes_issues, routes_pulls, routes_repos
from .api import ApiError
from .auth import (
    AuthError,
    credential,
    installation_token,
    make_app_key,
    needs_jwt,
    public_pem,
    verify_app_jwt,
)
from .builders import StateBuilder
from .openapi_check import check_request
from .routes_repos import CODELOAD_PREFIX
from .scopes import check_scope
from .state import Fault, GitHubState, Hook, RequestRecord, now

_STARTUP_TIMEOUT_SECONDS = 5.0
Handler = Callable[[Request], Awaitable[Response]]


@functools.cache
def default_app_key() -> str:
    """One RSA key per test process: generating one costs ~0.1 s, and it is never mutated."""
    return make_app_key()


def _json_or_text(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")


def _spec_gate(state: GitHubState, request: Request, raw: bytes) -> None:
    method, path = request.method, request.url.path
    if raw:
        try:
            json.loads(raw)
        except ValueError as exc:
            with state.lock:
                state.violations.append(f"{method} {path}: body is not JSON ({exc})")
            raise ApiError(400, "Problems parsing JSON") from exc
    found = check_request(method, path, dict(request.query_params), raw)
    if found:
        with state.lock:
            state.violations.append(found.message)
        raise ApiError(found.status, "Not Found" if found.status == 404 else found.message)


def _authenticate(state: GitHubState, public_key: str, request: Request) -> None:
    secret = credential(request.headers.get("authorization"))
    path = request.url.path
    if needs_jwt(path):
        verify_app_jwt(secret, public_key, state.app_id)
        return
    if path == "/rate_limit" and secret.count(".") == 2:
        verify_app_jwt(secret, public_key, state.app_id)  # GitHub answers apps here too
        return
    request.state.token = installation_token(state, secret, now())
    check_scope(request.state.token.permissions, request.method, path)


def _fault_response(fault: Fault) -> Response:
    body = fault.body if fault.body is not None else {"message": f"injected {fault.status}"}
    return JSONResponse(body, status_code=fault.status, headers=fault.headers)


async def _gate(request: Request, call_next: Handler) -> Response:
    state: GitHubState = request.app.state.github
    arrived = time.monotonic()
    raw = await request.body()
    try:
        if not request.url.path.startswith(CODELOAD_PREFIX):
            _spec_gate(state, request, raw)
        # Under the state's lock, but not across call_next: the route takes it again itself,
        # and nothing here may hold it while this thread serves other requests.
        with state.lock:
            state.run_hooks(request.method, request.url.path)
            fault = state.take_fault(request.method, request.url.path)
            if not fault and not request.url.path.startswith(CODELOAD_PREFIX):
                _authenticate(state, request.app.state.public_key, request)
        if fault:
            response = _fault_response(fault)
        else:
            response = await call_next(request)
    except AuthError as exc:
        response = ApiError(401, str(exc)).response()
    except ApiError as exc:
        response = exc.response()
    record = RequestRecord(
        request.method,
        request.url.path,
        dict(request.query_params),
        _json_or_text(raw),
        response.status_code,
        arrived,
    )
    with state.lock:
        state.requests.append(record)
    return response


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    if exc.violation:
        state: GitHubState = request.app.state.github
        problems = "; ".join(exc.errors) or exc.message
        with state.lock:
            state.violations.append(f"{request.method} {request.url.path}: {problems}")
    return exc.response()


def build_app(state: GitHubState, base_url: str, private_key: str) -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.github = state
    app.state.base_url = base_url
    app.state.public_key = public_pem(private_key)
    for module in (routes_apps, routes_checks, routes_issues, routes_pulls, routes_repos):
        app.include_router(module.router)
    app.add_exception_handler(ApiError, _api_error)
    app.middleware("http")(_gate)
    return app


class FakeGitHub(StateBuilder):
    """GitHub's REST API for one test: real HTTP on 127.0.0.1, state in plain dataclasses."""

    def __init__(self, app_id: int = 4242, private_key: str | None = None) -> None:
        super().__init__(GitHubState(app_id=app_id))
        self.app_id = app_id
        self.app_private_key = private_key or default_app_key()
        self.url = ""
        self._app: FastAPI | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeGitHub:
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets whose proto says
        # TCP, and without it every keep-alive response waits ~40 ms on a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._app = build_app(self.state, self.url, self.app_private_key)
        config = uvicorn.Config(
            self._app,
            log_level="warning",
            lifespan="off",
            access_log=False,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True, name="fake-github"
        )
        self._thread.start()
        deadline = time.monotonic() + _STARTUP_TIMEOUT_SECONDS
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake GitHub server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._server.force_exit = True  # do not wait for idle keep-alive clients
            self._thread.join(timeout=_STARTUP_TIMEOUT_SECONDS)
        self._server = self._thread = None

    def reset(self) -> None:
        """Forget everything (repos, tokens, log, faults, violations) and keep serving, so one
        server can outlive many tests: stopping uvicorn costs ~0.2 s, a reset nothing."""
        self.state = GitHubState(app_id=self.app_id)
        if self._app is not None:
            self._app.state.github = self.state

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # Faults, the request log and violations

    def inject(
        self,
        method: str,
        path_regex: str,
        status: int,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: Any = None,
    ) -> None:
        """Answer the next `times` matching requests with `status`, before any other handling."""
        fault = Fault(method.upper(), re.compile(path_regex), status, times, headers or {}, body)
        with self.state.lock:
            self.state.faults.append(fault)

    def on(self, method: str, path_regex: str, action: Callable[[], None], times: int = 1) -> None:
        """Run `action` when the next `times` matching requests arrive, before answering them."""
        hook = Hook(method.upper(), re.compile(path_regex), action, times)
        with self.state.lock:
            self.state.hooks.append(hook)

    def calls(self, method: str | None = None, path_regex: str = "") -> list[RequestRecord]:
        """Logged requests, oldest first, optionally filtered by method and path regex."""
        pattern = re.compile(path_regex)
        with self.state.lock:
            logged = list(self.state.requests)
        return [
            r
            for r in logged
            if (method is None or r.method == method.upper()) and pattern.search(r.path)
        ]

    @property
    def violations(self) -> list[str]:
        """A copy: the server may add more while the test reads."""
        with self.state.lock:
            return list(self.state.violations)

    def take_violations(self) -> list[str]:
        """Return and forget the violations so far (for tests that send off-spec on purpose)."""
        with self.state.lock:
            taken = list(self.state.violations)
            self.state.violations.clear()
        return taken

    def assert_no_violations(self) -> None:
        found = self.violations
        if found:
            listing = "\n  ".join(found)
            raise AssertionError(f"requests GitHub would refuse:\n  {listing}")
