"""A chart repository's `index.yaml`: read in a fetch process (its CPU and file-size limits bound
what a hostile index costs), kept as what the review uses of it, a version and its first archive
URL and digest per chart, and asked which release a dependency takes and where its archive is.

As Helm reads it: an archive URL is the entry's first `urls` item, a relative one resolved against
the repository's URL (with a trailing slash, and the repository's query), not against wherever the
index was redirected to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit, urlunsplit

from bot.render.deps.origin import origin
from bot.render.deps.request import DependencyRequest, FetchError, newest

# Chart versions one index may list: a real index within the 64 MB file limit lists some tens of
# thousands (an entry is a kilobyte or more); the cap also stops a walk that aliases would
# multiply (one list aliased under a million names) long before it exhausts memory.
MAX_INDEX_ENTRIES = 200_000


class IndexEntry(NamedTuple):
    version: str
    url: str | None  # the first of `urls`, as Helm downloads it
    digest: str | None  # `sha256:…` or bare hex, as `helm repo index` writes it


@dataclass(frozen=True)
class RepoIndex:
    repository: str
    charts: Mapping[str, Mapping[str, IndexEntry]]  # name → version → entry

    @property
    def size(self) -> int:
        return sum(len(versions) for versions in self.charts.values())

    def choose(self, request: DependencyRequest) -> IndexEntry:
        """The release `request` takes: its exact version, or a range's newest, as helm does."""
        versions = self.charts.get(request.name)
        if not versions:
            raise FetchError(request, f"chart {request.name} is not in the repository's index.yaml")
        wanted = request.version.strip()
        chosen = wanted if request.exact else newest(versions, wanted)
        if chosen is None or chosen not in versions:
            raise FetchError(
                request,
                f"no version of {request.name} matching {wanted} in the repository's index.yaml",
            )
        return versions[chosen]

    def archive_url(self, request: DependencyRequest, entry: IndexEntry) -> str:
        where = f"{request.name} {entry.version}"
        if entry.url is None:
            raise FetchError(request, f"the repository's index.yaml gives no URL for {where}")
        url = resolve(self.repository, entry.url)
        if origin(url) is None:
            raise FetchError(
                request,
                f"the repository's index.yaml gives {where} at {url}: only http:// and https:// "
                "archives are fetched",
            )
        return url


def index_url(repository: str) -> str:
    parts = urlsplit(repository.strip())
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/index.yaml", fragment=""))


def resolve(repository: str, url: str) -> str:
    if urlsplit(url).scheme:
        return url
    base = urlsplit(repository.strip())
    directory = urlunsplit(base._replace(path=base.path.rstrip("/") + "/", query="", fragment=""))
    return urlunsplit(urlsplit(urljoin(directory, url))._replace(query=base.query))


def load_index(repository: str, path: str) -> RepoIndex:
    """What `reduce_index` wrote, read back in the reviewing process."""
    with open(path, encoding="utf-8") as handle:
        charts = json.load(handle)
    return RepoIndex(
        repository,
        {
            name: {row[0]: IndexEntry(row[0], row[1], row[2]) for row in rows}
            for name, rows in charts.items()
        },
    )


def reduce_index(text: bytes, url: str) -> dict[str, list[list[str | None]]]:
    """In the fetch process: index.yaml's entries as `{name: [[version, url, digest], ...]}`.
    Entries Helm would skip (no version, not a mapping) are left out; values that are not
    scalars are never turned into text (an alias may stand for a billion of them)."""
    import yaml

    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise ValueError(f"{url} is not valid YAML: {' '.join(str(exc).split())}") from None
    entries = data.get("entries") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not data.get("apiVersion") or not isinstance(entries, dict):
        raise ValueError(f"{url} is not a chart repository index (no apiVersion and entries)")
    reduced: dict[str, list[list[str | None]]] = {}
    count = 0
    for name, releases in entries.items():
        if not isinstance(name, str) or not isinstance(releases, list):
            continue
        count += len(releases)
        if count > MAX_INDEX_ENTRIES:
            raise ValueError(f"{url} lists more than {MAX_INDEX_ENTRIES} chart versions")
        reduced[name] = [row for row in map(_row, releases) if row is not None]
    return reduced


def _row(entry: object) -> list[str | None] | None:
    if not isinstance(entry, dict):
        return None
    version = entry.get("version")
    if not isinstance(version, (str, int, float)) or isinstance(version, bool):
        return None
    urls = entry.get("urls")
    url = urls[0] if isinstance(urls, list) and urls and isinstance(urls[0], str) else None
    digest = entry.get("digest")
    return [str(version), url, digest if isinstance(digest, str) else None]
