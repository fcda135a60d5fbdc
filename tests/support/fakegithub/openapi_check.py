"""Check requests (and, in the fake's own tests, responses) against GitHub's REST description.

The description is `tests/fixtures/github/rest-api.subset.json`, a trimmed copy of GitHub's
OpenAPI document (see NOTICE.md there). Loading it takes ~0.2 s, so it is loaded once per process.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from openapi_core import OpenAPI
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_core.testing import MockRequest, MockResponse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github"
SPEC_PATH = FIXTURES / "rest-api.subset.json"
GITHUB_HOST = "https://api.github.com"

# Path parameters that may hold "/" (file paths, refs, branch names). openapi-core matches a
# template parameter against one segment only, so the tail is percent-encoded before matching.
_SLASHY = ("/contents/", "/git/ref/", "/git/matching-refs/", "/branches/", "/compare/")


class Violation(NamedTuple):
    status: int  # what GitHub would answer: 400, 404 or 422
    message: str


@functools.cache
def github_api() -> OpenAPI:
    return OpenAPI.from_file_path(str(SPEC_PATH))


@functools.cache
def spec_document() -> dict[str, Any]:
    return json.loads(SPEC_PATH.read_text())


def normalise(path: str) -> str:
    for marker in _SLASHY:
        if marker in path:
            head, tail = path.split(marker, 1)
            return head + marker + quote(tail, safe="")
    return path


def _mock_request(method: str, path: str, query: dict[str, str], body: bytes) -> MockRequest:
    return MockRequest(
        GITHUB_HOST,
        method.lower(),
        normalise(path),
        args=query,
        data=body or None,
        content_type="application/json",
    )


def _schema_errors(exc: BaseException) -> list[str]:
    """The jsonschema messages buried in openapi-core's exception chain, without the full value."""
    found: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for err in getattr(current, "schema_errors", ()) or ():
            where = "/".join(str(p) for p in err.absolute_path)
            message = err.message if len(err.message) < 300 else err.message[:300] + "..."
            found.append(f"{where or '<body>'}: {message}")
        current = current.__cause__ or current.__context__
    return found


def describe(exc: BaseException) -> str:
    details = _schema_errors(exc)
    head = f"{type(exc).__name__}: {str(exc)[:200]}"
    return head if not details else f"{head} ({'; '.join(details)})"


def check_request(method: str, path: str, query: dict[str, str], body: bytes) -> Violation | None:
    """None when the request matches the description, else what is wrong and the status."""
    where = f"{method} {path}"
    try:
        github_api().validate_request(_mock_request(method, path, query, body))
    except (PathNotFound, OperationNotFound) as exc:
        return Violation(404, f"{where}: not in the REST description ({type(exc).__name__})")
    except Exception as exc:  # openapi-core raises a family of validation errors
        return Violation(422, f"{where}: {describe(exc)}")
    return None


def response_problem(
    method: str, path: str, query: dict[str, str], body: bytes, status: int, data: bytes
) -> str | None:
    """For the fake's own tests: does a response match its documented schema?"""
    request = _mock_request(method, path, query, body)
    response = MockResponse(data, status_code=status, content_type="application/json")
    try:
        github_api().validate_response(request, response)
    except Exception as exc:
        return f"{method} {path} -> {status}: {describe(exc)}"
    return None
