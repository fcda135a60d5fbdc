"""The GitHub App: its JWT, installation tokens, and a client per repository.

The app's own calls (who am I, where am I installed, a token for an installation) are signed
with its JWT; everything else uses an installation token, cached until shortly before it expires.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from github import Auth, Github, GithubException, GithubIntegration, GithubRetry

from bot.app.github.repo import NOT_FOUND, InstallationAuth, PullState, RepoClient, RepoInfo

__all__ = ["AppCredentials", "GitHubApp", "PullState", "RepoClient", "RepoInfo"]

# A token is renewed this long before GitHub's expires_at, so that a job started with it does
# not run into the expiry halfway (tokens last an hour).
TOKEN_RENEWAL_MARGIN = timedelta(minutes=5)
PER_PAGE = 100  # GitHub's maximum page size: fewer round trips for comments and PRs
BOT_SUFFIX = "[bot]"  # an app acts as the user "<slug>[bot]"
RETRIES = 4  # with RETRY_BACKOFF 0.5 s: waits of 0.5, 1, 2 and 4 s, then the call fails
RETRY_BACKOFF = 0.5
MAX_RATE_LIMIT_WAIT = 60.0  # a longer Retry-After fails the call rather than hold a worker
# Where the App is installed, per repository, is asked with the JWT on every review that links
# another repository; remembered this long (an installation added meanwhile is seen after it).
INSTALLATION_TTL = timedelta(minutes=10)


@dataclass(frozen=True)
class AppCredentials:
    app_id: int
    private_key: str = field(repr=False)  # PEM text; never logged, never in repr
    api_url: str = "https://api.github.com"
    seconds_between_requests: float = 0.25  # PyGithub's courtesy throttle; tests pass 0
    seconds_between_writes: float = 1.0
    retry_backoff: float = RETRY_BACKOFF  # seconds before the first retry; doubles each time


def retry_policy(backoff: float) -> GithubRetry:
    """GitHub's 5xx, 429 and rate-limit 403s are retried with exponential backoff, Retry-After
    honoured; past the cap the call fails and the job completes its runs as "could not
    complete". Every method is retried, PATCH included: a check run left unfinished because
    one update hit a 502 is worse than the rare duplicate a retried POST can make."""
    return GithubRetry(
        total=RETRIES,
        backoff_factor=backoff,
        status_forcelist=[429, *range(500, 600)],
        allowed_methods=frozenset({"GET", "HEAD", "POST", "PATCH", "PUT", "DELETE"}),
        respect_retry_after_header=True,
        secondary_rate_wait=MAX_RATE_LIMIT_WAIT / 2,
        max_rate_limit_wait=MAX_RATE_LIMIT_WAIT,
    )


@dataclass(frozen=True)
class _CachedToken:
    token: str
    expires_at: datetime


class GitHubApp:
    def __init__(
        self, creds: AppCredentials, installation_ttl: timedelta = INSTALLATION_TTL
    ) -> None:
        self._creds = creds
        self._installation_ttl = installation_ttl
        self._integration = GithubIntegration(
            auth=Auth.AppAuth(creds.app_id, creds.private_key),
            base_url=creds.api_url,
            seconds_between_requests=creds.seconds_between_requests,
            seconds_between_writes=creds.seconds_between_writes,
            retry=retry_policy(creds.retry_backoff),
        )
        self._lock = threading.Lock()
        self._tokens: dict[int, _CachedToken] = {}
        self._installations: dict[str, tuple[int | None, datetime]] = {}
        self._login: str | None = None

    def __repr__(self) -> str:
        return f"GitHubApp(app_id={self._creds.app_id}, api_url={self._creds.api_url!r})"

    @property
    def app_id(self) -> int:
        return self._creds.app_id

    def bot_login(self) -> str:
        """The login the app's comments and reviews carry, e.g. `chart-review[bot]`."""
        with self._lock:
            if self._login is None:
                self._login = self._integration.get_app().slug + BOT_SUFFIX
            return self._login

    def installation_token(self, installation_id: int) -> str:
        # One lock for all installations: a fetch takes one request, and holding the lock
        # keeps two jobs of one installation from both fetching.
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached is None or cached.expires_at - TOKEN_RENEWAL_MARGIN <= datetime.now(UTC):
                granted = self._integration.get_access_token(installation_id)
                cached = _CachedToken(granted.token, granted.expires_at)
                self._tokens[installation_id] = cached
            return cached.token

    def forget_token(self, installation_id: int, token: str) -> None:
        """Drop `token` after GitHub refused it; a token another thread renewed meanwhile stays."""
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached is not None and cached.token == token:
                del self._tokens[installation_id]

    def installation_id(self, full_name: str) -> int | None:
        """The installation on a repository, None when the App is not installed there."""
        with self._lock:
            cached = self._installations.get(full_name)
        if cached is not None and datetime.now(UTC) < cached[1]:
            return cached[0]
        found = self._fetch_installation_id(full_name)
        with self._lock:
            self._installations[full_name] = (found, datetime.now(UTC) + self._installation_ttl)
        return found

    def _fetch_installation_id(self, full_name: str) -> int | None:
        owner, name = full_name.split("/", 1)
        try:
            return int(self._integration.get_repo_installation(owner, name).id)
        except GithubException as exc:
            if exc.status == NOT_FOUND:
                return None  # not installed there
            raise

    def repo(self, full_name: str, installation_id: int) -> RepoClient:
        auth = InstallationAuth(
            current=lambda: self.installation_token(installation_id),
            forget=lambda token: self.forget_token(installation_id, token),
        )
        gh = Github(
            base_url=self._creds.api_url,
            auth=auth,
            per_page=PER_PAGE,
            lazy=True,
            seconds_between_requests=self._creds.seconds_between_requests,
            seconds_between_writes=self._creds.seconds_between_writes,
            retry=retry_policy(self._creds.retry_backoff),
        )
        return RepoClient(full_name, gh, auth, self.bot_login, self.app_id)
