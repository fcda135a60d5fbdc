"""Which repositories a review may fetch from, and with what credentials.

The allow-list is the base's: the config's `dependencies.repositories`, else every repository the
base's `Chart.yaml` files already name. A pull request cannot point the bot at a host of its own
choosing: a repository only its head names is refused before anything is asked of the network.
Credentials are never in the repository: the config names environment variables
(HELM_REPO_<NAME>_USERNAME / _PASSWORD) or a registry config file on the bot's machine.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from bot.render.deps.request import OCI


@dataclass(frozen=True)
class Access:
    """How to reach one allowed repository."""

    url: str
    name: str | None = None  # the credentials' environment variables' NAME
    registry_config: str | None = None
    username: str | None = None  # from --repository-config (helm's repositories.yaml)
    password: str | None = None


@dataclass(frozen=True)
class FetchPolicy:
    allowed: tuple[Access, ...] = ()
    offline: bool = False
    offline_why: str = "fetching is off (offline)"
    # The config's own list (True) or the base's Chart.yaml files (False): said when refusing.
    configured: bool = False
    aliases: Mapping[str, str] = field(default_factory=dict)  # `@name` → URL

    def access(self, url: str) -> Access | None:
        """The allowed entry `url` falls under: a chart repository by its exact URL, an OCI
        registry path by prefix (`oci://host/charts` allows `oci://host/charts/team`)."""
        wanted = normalise(url)
        for entry in self.allowed:
            allowed = normalise(entry.url)
            if wanted == allowed or (url.startswith(OCI) and wanted.startswith(allowed + "/")):
                return entry
        return None

    def refusal(self, url: str) -> str:
        where = (
            "dependencies.repositories in .github/chart-review.yml"
            if self.configured
            else "the repositories the base's Chart.yaml files name (set "
            "dependencies.repositories in .github/chart-review.yml to allow more)"
        )
        return f"{url} is not among {where}; not fetched"


def normalise(url: str) -> str:
    return url.strip().rstrip("/").lower() if url.startswith(OCI) else url.strip().rstrip("/")


def credentials(access: Access, environ: Mapping[str, str] = os.environ) -> tuple[str, str] | None:
    """The username and password for `access`: its named environment variables, else what the
    repository config gave. None: anonymous."""
    if access.name:
        stem = "HELM_REPO_" + re.sub(r"[^A-Z0-9]", "_", access.name.upper())
        user, password = environ.get(f"{stem}_USERNAME"), environ.get(f"{stem}_PASSWORD")
        if user is not None and password is not None:
            return user, password
    if access.username is not None and access.password is not None:
        return access.username, access.password
    return None


def plain_http(url: str) -> bool:
    """An `http://` repository, or a registry on a loopback address (as Docker treats them: an
    insecure registry unless it says otherwise), is spoken to without TLS. Loopback is an address
    in 127.0.0.0/8 or ::1, or the name `localhost` itself: `127.example.com` is a name like any
    other, which DNS may send anywhere."""
    if url.startswith("http://"):
        return True
    host = urlsplit(url.replace(OCI, "https://", 1)).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
