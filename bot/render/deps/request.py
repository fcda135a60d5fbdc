"""What the review asks the dependency fetcher for, what it gets back, and why a fetch failed."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from bot.errors import ChartReviewError
from bot.kube.constraint import satisfies

# A plain version pins one release; anything else (`~1.2.0`, `1.x`, `>=2`) is a range to resolve.
_EXACT_RE = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
OCI = "oci://"


@dataclass(frozen=True)
class DependencyRequest:
    repository: str  # `https://charts.example.com`, `oci://host/path`: not the chart itself
    name: str
    version: str  # exact (from Chart.lock, or pinned in Chart.yaml) or a constraint

    @property
    def exact(self) -> bool:
        return bool(_EXACT_RE.match(self.version.strip()))

    @property
    def oci(self) -> bool:
        return self.repository.startswith(OCI)

    @property
    def reference(self) -> str:
        """The chart's own reference: `oci://host/path/NAME`, or the repository URL for http(s)."""
        return f"{self.repository.rstrip('/')}/{self.name}" if self.oci else self.repository

    @property
    def host(self) -> str:
        return urlsplit(self.repository.replace(OCI, "https://", 1)).netloc

    def describe(self) -> str:
        return f"dependency {self.name} {self.version} from {self.repository}"


@dataclass(frozen=True)
class Fetched:
    """A chart archive, its exact version, and its sha256 (the bytes' address in the store)."""

    data: bytes
    version: str
    digest: str  # `sha256:…`


def newest(versions: Iterable[str], constraint: str) -> str | None:
    """The highest SemVer version satisfying `constraint`, as `helm dependency update` chooses."""
    import semver

    matching = []
    for version in versions:
        try:
            parsed = semver.Version.parse(version.removeprefix("v"))
        except ValueError:
            continue
        if satisfies(version, constraint):
            matching.append((parsed, version))
    return max(matching)[1] if matching else None


class FetchError(ChartReviewError):
    """The dependency could not be had. `reason` ends the sentence "could not be fetched: …"."""

    def __init__(self, request: DependencyRequest, reason: str) -> None:
        super().__init__(f"{request.describe()} could not be fetched: {reason}")
        self.request, self.reason = request, reason
