"""A fake GitHub REST API for the test suite: the one stand-in for GitHub.

with FakeGitHub() as fake:
    fake.add_repo("acme/charts")
    gh = github.Github(base_url=fake.url, auth=github.Auth.Token(fake.issue_token()))
"""

from .auth import make_app_key
from .server import FakeGitHub
from .state import ChangedFile

# PyGithub spaces its own calls (0.25 s between requests, 1 s between writes) to spare GitHub's
# secondary rate limits; against the fake that is only dead time, so tests switch it off.
NO_THROTTLE = {"seconds_between_requests": 0.0, "seconds_between_writes": 0.0}

__all__ = ["NO_THROTTLE", "ChangedFile", "FakeGitHub", "make_app_key"]
