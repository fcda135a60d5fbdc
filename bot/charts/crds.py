"""What `.Capabilities.APIVersions` holds for a chart's render, as Helm installs it: the API
versions the CRDs of `crds/` define (the chart's own, its unpacked, vendored and `file://`
subcharts'), read from the files, not rendered; and, after a render, those of the CRDs its
templates define. Only when some template asks: otherwise no API version can change a render."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from bot.charts.dependencies import LocalChart
from bot.charts.profiles import MAX_VALUES_BYTES
from bot.git.objects import GitReader
from bot.git.tree import GitTree
from bot.kube.capabilities import Capabilities, crd_api_versions
from bot.lru import BoundedCache
from bot.model.chart_files import HELMIGNORE, dir_prefix, ignored, is_vendored_archive, parse_rules
from bot.model.manifests import Document
from bot.model.yaml import bounded
from bot.model.yaml.errors import YAML_FAILURES
from bot.tarball.headers import ArchiveRefused
from bot.tarball.reader import Member, members
from bot.textlines import git_lines

# Helm's CRD files (`Chart.CRDObjects`): under the chart's or a subchart's `crds/`, a manifest by
# its extension; in a vendored archive, the same path inside its chart.
_CRD_FILE_RE = re.compile(r"^(?:charts/[^/]+/)*crds/.+\.(?:ya?ml|json)$")
_TEMPLATE_RE = re.compile(r"^(?:charts/[^/]+/)*templates/")
# How a template asks for API versions, however it reaches `.Capabilities` (`$.Capabilities`,
# `.context.Capabilities`, `$caps := .Capabilities`).
_ASKS_API_VERSIONS = b"APIVersions"
# Template blob id → whether it asks; CRD file or vendored archive blob id → its API versions.
_ASKS: BoundedCache[str, bool] = BoundedCache(16384)
_CRD_VERSIONS: BoundedCache[str, tuple[str, ...]] = BoundedCache(4096)


@dataclass(frozen=True)
class SideCapabilities:
    """A side's capabilities: the review's, plus what its chart's `crds/` define. `asks`: some
    template reads `.Capabilities.APIVersions`; if none does, no API version can change a render,
    and none is added (which would only split the render cache)."""

    capabilities: Capabilities
    asks: bool


def chart_capabilities(
    repo: GitReader,
    tree: GitTree,
    chart_dir: str,
    capabilities: Capabilities,
    charts: Sequence[LocalChart] = (),
) -> SideCapabilities:
    """As Helm installs a chart: the CRDs of `crds/` (its own, unpacked and vendored subcharts')
    first, so their API versions are there when the templates render. Read from the files, not
    rendered (Helm does not template them). A disabled subchart's CRDs count too: which
    subcharts are enabled depends on the values, and the cost is only an API version too many."""
    entries: dict[str, str] = {}
    for chart in charts or (LocalChart(chart_dir),):
        entries.update(_chart_entries(tree, chart.directory, chart.prefix))
    vendored = [oid for rel, oid in entries.items() if is_vendored_archive(rel, "")]
    templates = [oid for rel, oid in entries.items() if _TEMPLATE_RE.match(rel)]
    # A vendored archive's templates are not read: it is taken to ask.
    if not vendored and not _any_asks(repo, templates):
        return SideCapabilities(capabilities, asks=False)
    found = [
        version
        for rel, oid in entries.items()
        if _CRD_FILE_RE.match(rel)
        for version in _CRD_VERSIONS.get_or_make(oid, partial(_file_versions, repo, oid))
    ]
    for oid in vendored:
        found += _CRD_VERSIONS.get_or_make(oid, partial(_archived_versions, repo, oid))
    return SideCapabilities(capabilities.adding(found), asks=True)


def _chart_entries(tree: GitTree, chart_dir: str, at: str = "") -> dict[str, str]:
    """The chart's files Helm loads, by path relative to the chart (placed `at` a dependency's
    place in the chart that uses it) → blob id. Remembered by the directory's tree id (what they
    depend on, `.helmignore` included): the base of every PR against develop is the same tree."""
    tree_id = tree.tree_id(chart_dir)
    if tree_id is None:
        return _read_entries(tree, chart_dir, at)
    make = partial(_read_entries, tree, chart_dir, at)
    return _ENTRIES.get_or_make((tree_id, chart_dir, at), make)


_ENTRIES: BoundedCache[tuple[str, str, str], dict[str, str]] = BoundedCache(512)


def _read_entries(tree: GitTree, chart_dir: str, at: str) -> dict[str, str]:
    prefix = dir_prefix(chart_dir)
    rules = parse_rules(git_lines(tree.text(f"{prefix}{HELMIGNORE}") or ""))
    out = {}
    for path in tree.paths(chart_dir):
        entry, rel = tree.entry(path), path[len(prefix) :]
        if entry is not None and entry.kind == "blob" and not ignored(rel, rules):
            out[at + rel] = entry.oid
    return out


def _any_asks(repo: GitReader, oids: list[str]) -> bool:
    unknown = [oid for oid in oids if _ASKS.get(oid) is None]
    for oid, data in zip(unknown, repo.blobs(unknown) if unknown else [], strict=True):
        _ASKS.put(oid, _ASKS_API_VERSIONS in data)
    return any(_ASKS.get(oid) for oid in oids)


def _file_versions(repo: GitReader, oid: str) -> tuple[str, ...]:
    data = repo.blob(oid)
    return _text_versions(data) if len(data) <= MAX_VALUES_BYTES else ()


def _text_versions(data: bytes) -> tuple[str, ...]:
    """The API versions the CRDs of one file define; none from a file that is not YAML (Helm says
    so itself when it installs it)."""
    try:
        docs = bounded.load_all(data.decode("utf-8", errors="replace"))
    except YAML_FAILURES:
        return ()
    return tuple(v for doc in docs if isinstance(doc, Mapping) for v in crd_api_versions(doc))


def _archived_versions(repo: GitReader, oid: str) -> tuple[str, ...]:
    """A vendored subchart's `crds/`, its own (the tree check has refused an archive past the
    bounded reader's caps, so this read stays within them)."""
    found: list[str] = []
    try:
        for member in members(repo.blob(oid), _is_crd_file):
            if member.data is not None:
                found += _text_versions(member.data)
    except ArchiveRefused:
        return ()  # refused by the tree check already: never rendered
    return tuple(found)


def _is_crd_file(member: Member) -> bool:
    return (
        not member.within
        and member.size <= MAX_VALUES_BYTES
        and bool(_CRD_FILE_RE.match(member.path))
    )


def new_api_versions(docs: tuple[Document, ...], caps: SideCapabilities) -> tuple[str, ...]:
    """API versions that the CRDs a render defines add to those it was rendered with."""
    if not caps.asks:
        return ()
    found = {
        v for d in docs if d.kind == "CustomResourceDefinition" for v in crd_api_versions(d.body)
    }
    return tuple(sorted(found - set(caps.capabilities.api_versions)))
