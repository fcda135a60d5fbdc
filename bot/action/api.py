"""GitHub for the action: the App's own RepoClient, authenticated by the workflow's token.

Whatever a workflow token writes, GitHub attributes to the GitHub Actions app, as the user
`github-actions[bot]`: that is whose check runs a re-run edits and whose summary comment it keeps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from github import Github

from bot.action.env import ActionSetupError
from bot.app.github.app import PER_PAGE, AppCredentials, retry_policy
from bot.app.github.checks import AppIdentity
from bot.app.github.repo import InstallationAuth, RepoClient
from bot.report.inline import InlineComment, PostedComment

# GitHub Actions' app on github.com (`GET /apps/github-actions`); its runs on a head are this
# action's own when a re-run looks for them. On GitHub Enterprise Server the id differs, and a
# re-run of the same head then adds runs instead of editing them.
ACTIONS_APP_ID = 15368  # on github.com; each Enterprise Server has its own
ACTIONS_SLUG = "github-actions"
GITHUB_COM_API = "https://api.github.com"
ACTIONS_LOGIN = "github-actions[bot]"
FORBIDDEN = 403


PACING = (
    "GITHUB_SECONDS_BETWEEN_REQUESTS",
    "GITHUB_SECONDS_BETWEEN_WRITES",
    "GITHUB_RETRY_BACKOFF",
)


def pacing(environ: Mapping[str, str]) -> AppCredentials:
    """PyGithub's courtesy spacing and the retry backoff, from the App's own variables and with
    its defaults (the action has no App: only these fields are read)."""
    app = AppCredentials(app_id=0, private_key="")
    defaults = (app.seconds_between_requests, app.seconds_between_writes, app.retry_backoff)
    requests, writes, backoff = (
        _seconds(environ, n, d) for n, d in zip(PACING, defaults, strict=True)
    )
    return AppCredentials(
        0,
        "",
        seconds_between_requests=requests,
        seconds_between_writes=writes,
        retry_backoff=backoff,
    )


def _seconds(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = -1.0
    if value < 0:
        raise ActionSetupError(f"{name} must be a number of seconds, got {raw!r}")
    return value


def token_client(
    full_name: str, token: str, api_url: str, pace: AppCredentials, comment: bool = True
) -> RepoClient:
    """The App's client over the workflow's token, which is never renewed: RepoClient retries a
    401 once (with the same token here), then it stands. `comment: false` posts no comment."""
    auth = InstallationAuth(current=lambda: token, forget=lambda _token: None)
    gh = Github(
        base_url=api_url,
        auth=auth,
        per_page=PER_PAGE,
        lazy=True,
        seconds_between_requests=pace.seconds_between_requests,
        seconds_between_writes=pace.seconds_between_writes,
        retry=retry_policy(pace.retry_backoff),
    )
    cls = RepoClient if comment else ChecksOnlyClient
    return cls(full_name, gh, auth, lambda: ACTIONS_LOGIN, actions_app(api_url))


def actions_app(api_url: str) -> AppIdentity:
    """The runs a workflow token makes belong to GitHub Actions: known by id on github.com, by
    slug on an Enterprise Server, where a re-run must find the runs it made before all the same."""
    on_github_com = api_url.rstrip("/") == GITHUB_COM_API
    return AppIdentity(ACTIONS_APP_ID if on_github_com else None, ACTIONS_SLUG)


class ChecksOnlyClient(RepoClient):
    """`comment: false`: the check runs as the App publishes them, and no comment at all."""

    def bot_review_comments(self, number: int) -> list[PostedComment]:
        return []

    def edit_review_comment(self, comment_id: int, body: str) -> None:
        return None

    def post_review(
        self, number: int, head_sha: str, comments: Sequence[InlineComment], body: str
    ) -> None:
        return None

    def upsert_summary_comment(self, number: int, body: str) -> int:
        return 0
