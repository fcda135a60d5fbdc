"""Charts in a repository at two commits: which ones a review covers, and their renders per profile."""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from bot.engine.chart.archive import UnsafeTreeError, chart_archive, check_entry
from bot.engine.chart.files import HELMIGNORE, chart_file, ignored, parse_rules
from bot.engine.chart.schemas import SCHEMA_FILE, archive_escape, schema_escape
from bot.engine.chart.selection import chart_meta
from bot.engine.config import Config
from bot.engine.context import ChartRenders, Rendered, RenderError
from bot.engine.manifests import ManifestError, parse_rendered, pod_templates, template_repo_path
from bot.engine.profiles import Profile, check_values_size, discover_profiles, load_values
from bot.engine.report import RenderErrorEntry
from bot.git.repo import GitRepo, GitTree
from bot.lru import BoundedCache
from bot.render.base import RENDER_WORKERS, Renderer, RenderFailure
from bot.render.cache import CachedRender, CacheKey, RenderCache

SIDES = ("base", "head")
# Vendored subchart archives by blob id → why one must be refused (None: safe), read once.
_VENDORED: BoundedCache[str, str | None] = BoundedCache(4096)
_POOL = ThreadPoolExecutor(max_workers=RENDER_WORKERS, thread_name_prefix="render")


@dataclass(frozen=True)
class ChartSource:
    path: str
    base: GitTree
    head: GitTree

    def tree(self, side: str) -> GitTree:
        return self.base if side == "base" else self.head

    def exists(self, side: str) -> bool:
        return self.tree(side).read(chart_file(self.path)) is not None


def render_chart(
    source: ChartSource,
    config: Config,
    only: Sequence[str],
    renderer: Renderer,
    cache: RenderCache,
    repo: GitRepo,
    release: str,
    namespace: str,
) -> ChartRenders:
    sides: dict[str, dict[str, Rendered]] = {"base": {}, "head": {}}
    refused: dict[str, str] = {}
    unvalidated: dict[str, dict[str, str]] = {}
    all_profiles: dict[str, Profile] = {}
    pending: dict[str, dict[str, Future[Rendered]]] = {}
    jobs: list[list[tuple[str, str, GitTree, Profile, _Archiver]]] = []
    for side in SIDES:
        if not source.exists(side):
            continue
        tree = source.tree(side)
        profiles = discover_profiles(
            source.path, tree.paths(source.path), config.profiles_for(source.path)
        )
        profiles = {n: p for n, p in profiles.items() if not only or n in only}
        all_profiles.update(profiles)
        reason = unsafe_reason(tree, source.path)
        if reason is not None:
            refused[side] = reason
            err = RenderError(None, None, f"chart tree refused: {reason}")
            sides[side] = {n: Rendered(n, error=err) for n in profiles}
            continue
        unvalidated[side] = unsafe_schemas(tree, source.path)
        archiver = _Archiver(repo, tree, source.path, frozenset(unvalidated[side]))
        jobs.append([(side, n, tree, p, archiver) for n, p in profiles.items()])
    # Sides alternate, so one worker builds the head's archive while another builds the base's.
    for batch in itertools.zip_longest(*jobs):
        for job in batch:
            if job is None:
                continue
            side, name, tree, profile, archiver = job
            pending.setdefault(side, {})[name] = _POOL.submit(
                render_profile,
                tree,
                source.path,
                profile,
                archiver,
                renderer,
                cache,
                release,
                namespace,
            )
    for side, futures in pending.items():
        sides[side].update({name: future.result() for name, future in futures.items()})
    meta = (
        chart_meta(source.head, source.path)
        if source.exists("head")
        else chart_meta(source.base, source.path)
    )
    return ChartRenders(
        path=source.path,
        name=meta.name or source.path.rsplit("/", 1)[-1],
        base=sides["base"],
        head=sides["head"],
        profiles={n: _spec(p) for n, p in all_profiles.items()},
        refused=refused,
        unvalidated=unvalidated,
    )


def _spec(profile: Profile) -> Any:
    from bot.engine.config import ProfileSpec

    return ProfileSpec(
        name=profile.name,
        values_file=profile.values_path,
        values=dict(profile.inline) if profile.inline is not None else None,
        arbitrary_uid=profile.arbitrary_uid,
    )


def unsafe_reason(tree: GitTree, chart_dir: str) -> str | None:
    for path in tree.paths(chart_dir):
        entry = tree.entry(path)
        if entry is None:
            continue
        try:
            check_entry(path, entry)
        except UnsafeTreeError as exc:
            return str(exc)
        if entry.kind == "blob" and _vendored(path, chart_dir):
            why = _VENDORED.get_or_make(entry.oid, partial(_archive_escape, tree, path))
            if why is not None:
                return f"{path}: {why}; refused, not handed to Helm"
    return None


def _archive_escape(tree: GitTree, path: str) -> str | None:
    return archive_escape(tree.read(path) or b"")


def _vendored(path: str, chart_dir: str) -> bool:
    """A packaged dependency: `charts/NAME.tgz` of this chart or of one of its subcharts."""
    relative = path[len(chart_dir) :].lstrip("/") if chart_dir not in ("", ".") else path
    return relative.endswith(".tgz") and (relative.startswith("charts/") or "/charts/" in relative)


def unsafe_schemas(tree: GitTree, chart_dir: str) -> dict[str, str]:
    """The chart's (and unpacked subcharts') schema files that reach outside the chart, by
    repository path, with why: they are left out of the archive (bot/engine/chart/schemas.py)."""
    found = {}
    for path in tree.paths(chart_dir):
        if path.rsplit("/", 1)[-1] == SCHEMA_FILE:
            why = schema_escape(tree.text(path) or "")
            if why is not None:
                found[path] = why
    return found


class _Archiver:
    """Builds the chart's archive only when a render actually needs it (a cache miss), once."""

    def __init__(
        self, repo: GitRepo, tree: GitTree, chart_dir: str, left_out: frozenset[str] = frozenset()
    ) -> None:
        self.repo, self.tree, self.chart_dir = repo, tree, chart_dir
        prefix = chart_dir.rstrip("/") + "/" if chart_dir not in ("", ".") else ""
        self.left_out = frozenset(p[len(prefix) :] for p in left_out)
        self._archive: bytes | None = None
        self._lock = threading.Lock()

    def archive(self) -> bytes:
        with self._lock:
            return self._build()

    def _build(self) -> bytes:
        if self._archive is None:
            rules = parse_rules(
                (self.tree.text(f"{self.chart_dir}/{HELMIGNORE}".lstrip("./")) or "").splitlines()
            )
            # Helm's own directory loader skips what .helmignore names; an archive must be built so.
            self._archive = chart_archive(
                self.repo,
                self.tree.commit,
                self.chart_dir,
                lambda rel: rel not in self.left_out and not ignored(rel, rules),
            )
        return self._archive


def profile_values(tree: GitTree, profile: Profile) -> tuple[dict[str, Any], str]:
    """The values a profile supplies, and their content id for the render cache."""
    values: dict[str, Any] = {}
    ids = []
    if profile.values_path is not None:
        entry = tree.entry(profile.values_path)
        data = tree.read(profile.values_path)
        if entry is None or data is None:
            raise RenderFailure(
                f"values file {profile.values_path} does not exist", profile.values_path
            )
        # Checked before parsing: the parse runs in the reviewing process, outside the sandbox.
        check_values_size(len(data), profile.values_path)
        values = load_values(data.decode("utf-8", errors="replace"), profile.values_path)
        ids.append(entry.oid)
    if profile.inline is not None:
        values = deep_merge(values, profile.inline)
        ids.append(hashlib.sha256(json.dumps(profile.inline, sort_keys=True).encode()).hexdigest())
    return values, "+".join(ids) or "defaults"


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def render_profile(
    tree: GitTree,
    chart_dir: str,
    profile: Profile,
    archiver: _Archiver,
    renderer: Renderer,
    cache: RenderCache,
    release: str,
    namespace: str,
) -> Rendered:
    try:
        values, values_id = profile_values(tree, profile)
    except RenderFailure as exc:
        return Rendered(profile.name, error=RenderError(exc.template, exc.line, exc.message))
    key = CacheKey(tree.tree_id(chart_dir) or "", values_id, renderer.version, release, namespace)
    hit = cache.get(key)
    if hit is None:
        try:
            hit = CachedRender(
                renderer.render(archiver.archive(), values, release, namespace), None
            )
        except RenderFailure as failure:
            hit = CachedRender(None, failure)
        if hit.error is None or not hit.error.transient:
            cache.put(key, hit)
    if hit.error is not None or hit.manifests is None:
        err = hit.error or RenderFailure("no output")
        template = (
            template_repo_path(err.template, chart_dir)
            if err.template and "/" in err.template
            else err.template
        )
        return Rendered(
            profile.name, error=RenderError(template, err.line, err.message), values=values
        )
    try:
        docs = parse_rendered(hit.manifests, chart_dir, namespace)
    except ManifestError as exc:
        return Rendered(
            profile.name, error=RenderError(exc.template, exc.line, str(exc)), values=values
        )
    # Here, while the other workers render: most checks read a render's pod templates.
    pod_templates(docs)
    return Rendered(profile.name, documents=docs, values=values)


def render_error_entries(renders: ChartRenders) -> tuple[RenderErrorEntry, ...]:
    """Every failed render of the chart, for the JSON report's `render_errors`."""
    out = []
    for side in SIDES:
        for profile, rendered in sorted(renders.side(side).items()):
            if rendered.error is not None:
                e = rendered.error
                out.append(RenderErrorEntry(side, profile, e.template, e.line, e.message))
    return tuple(out)
