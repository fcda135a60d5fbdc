"""One profile of one side: its values, its render (from the cache, or once however many reviews
ask at the same moment), and, when asked, `helm lint` with the same values (bot/render/lint.py).

Lint costs far more than a render (Helm validates every object it renders), so it is asked only
where its answer can matter: at head, and at base only when the head has something to say that the
base might already have said (bot/charts/renders.py decides)."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, Protocol

from bot.charts.crds import SideCapabilities, new_api_versions
from bot.charts.dependencies import LocalChart
from bot.charts.lint import lint_messages
from bot.charts.profiles import Profile, check_values_size, load_values, merge_values
from bot.git.tree import GitTree
from bot.kube.capabilities import DEFAULT_CAPABILITIES, Capabilities
from bot.lru import BoundedCache
from bot.model.context import Rendered, RenderError
from bot.model.manifests import ManifestError, parse_rendered, pod_templates, template_repo_path
from bot.render.base import Renderer, RenderFailure, is_dependency_missing
from bot.render.cache import CachedRender, CacheKey, RenderCache
from bot.render.lint import Linted, can_lint, lint_alone, render_and_lint


class Archiver(Protocol):
    """The side's chart archive, built only when a render needs it (renders.py's _Archiver)."""

    @property
    def charts(self) -> Sequence[LocalChart]: ...

    def content_id(self) -> str: ...

    def archive(self) -> bytes: ...


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
        values = _parsed_values(entry.oid, data, profile.values_path)
        ids.append(entry.oid)
    if profile.inline is not None:
        values = merge_values(values, profile.inline)
        ids.append(hashlib.sha256(json.dumps(profile.inline, sort_keys=True).encode()).hexdigest())
    if profile.override:
        values = profile.override.apply(values)
        ids.append(profile.override.content_id)
    return values, "+".join(ids) or "defaults"


def _parsed_values(oid: str, data: bytes, path: str) -> dict[str, Any]:
    """A values file's mapping, parsed once per blob: each side and each review of a chart reads
    the same `ci/*-values.yaml` again (a replay, 1,400 times in 200 changes). Read-only: merges
    and overrides copy what they change (bot/charts/profiles.py)."""
    found = _VALUES.get(oid)
    if found is None:
        found = (load_values(data.decode("utf-8", errors="replace"), path), len(data))
        _VALUES.put(oid, found)
    return found[0]


# Parsed values files by blob id, weighed by their text (what they parse from, bounded by
# check_values_size each).
_VALUES: BoundedCache[str, tuple[dict[str, Any], int]] = BoundedCache(
    8 * 2**20, lambda entry: 64 + entry[1]
)


def render_profile(
    tree: GitTree,
    chart_dir: str,
    profile: Profile,
    archiver: Archiver,
    renderer: Renderer,
    cache: RenderCache,
    release: str,
    namespace: str,
    caps: SideCapabilities | None = None,
    lint: bool = False,
    parse_only: frozenset[str] | None = None,
) -> Rendered:
    """`lint`: also lint the render the review keeps (the last one, when CRDs make a second).
    `parse_only`: parse only those templates' objects (repository paths); not where the chart
    asks `.Capabilities`, whose CRDs are read from every template for a second render."""
    caps = caps or SideCapabilities(DEFAULT_CAPABILITIES, asks=False)
    try:
        values, values_id = profile_values(tree, profile)
    except RenderFailure as exc:
        return Rendered(profile.name, error=RenderError(exc.template, exc.line, exc.message))
    render = partial(
        _render_cached,
        archiver.content_id(),
        values_id,
        values,
        archiver,
        renderer,
        cache,
        release,
        namespace,
    )
    placed = {c.prefix: c.directory for c in archiver.charts if c.prefix}
    only = None if caps.asks else parse_only
    done = partial(_rendered, profile.name, values, chart_dir, namespace, placed, only=only)
    # A chart that may render twice is linted on the render kept, not on both.
    rendered = done(render(caps.capabilities, lint and not caps.asks))
    more = new_api_versions(rendered.documents, caps)
    if more:
        # The templates define CRDs and ask `.Capabilities.APIVersions`: rendered again as they
        # would be once those CRDs are installed (an upgrade, or a cluster that has them).
        return done(render(caps.capabilities.adding(more), lint))
    if lint and rendered.lint is None and caps.asks:
        rendered = done(render(caps.capabilities, True))
    return rendered


def _render_cached(
    tree_id: str,
    values_id: str,
    values: Mapping[str, Any],
    archiver: Archiver,
    renderer: Renderer,
    cache: RenderCache,
    release: str,
    namespace: str,
    capabilities: Capabilities,
    lint: bool = False,
) -> CachedRender:
    key = CacheKey(tree_id, values_id, renderer.version, release, namespace, capabilities.cache_id)
    hit = cache.get(key)
    if hit is None:
        make = partial(_render_new, key, values, archiver, renderer, cache, capabilities)
        hit = _IN_FLIGHT.once((id(cache), key, False), make)
    if lint and _lintable(hit, renderer):
        # The render is in (made here, or joined where another thread made it): lint alone,
        # never a second render of the same inputs.
        make = partial(_lint_new, key, values, archiver, renderer, cache, capabilities, hit)
        hit = _IN_FLIGHT.once((id(cache), key, True), make)
    return hit


def _lintable(hit: CachedRender, renderer: Renderer) -> bool:
    """A render cached without its lint (rendered before the review knew whether lint could
    matter there), by a renderer that can lint: asked again, linted. A render that failed only on
    the chart's own error, which names its template (lint stops at it at once, and may still warn
    of the rest); not one a limit stopped, which would only stop it again, at its full cost."""
    if hit.lint is not None or not can_lint(renderer):
        return False
    return hit.error is None or hit.error.template is not None


def _render_new(
    key: CacheKey,
    values: Mapping[str, Any],
    archiver: Archiver,
    renderer: Renderer,
    cache: RenderCache,
    capabilities: Capabilities,
) -> CachedRender:
    hit = cache.get(key)  # rendered meanwhile, by the render this one would have waited for
    if hit is not None:
        return hit
    # A renderer is told capabilities only when they differ from its defaults.
    told = capabilities if capabilities.cache_id else None
    try:
        archive = archiver.archive()
        out = render_and_lint(renderer, archive, values, key.release, key.namespace, told, False)
    except RenderFailure as failure:  # the archive could not be built
        out = Linted(None, failure, None, transient=failure.transient)
    hit = CachedRender(out.manifests, out.error, out.lint)
    if not out.transient:
        cache.put(key, hit)
    return hit


def _lint_new(
    key: CacheKey,
    values: Mapping[str, Any],
    archiver: Archiver,
    renderer: Renderer,
    cache: RenderCache,
    capabilities: Capabilities,
    rendered: CachedRender,
) -> CachedRender:
    """`rendered` with the lint of the same inputs, cached together."""
    hit = cache.get(key)  # linted meanwhile
    if hit is not None and hit.lint is not None:
        return hit
    told = capabilities if capabilities.cache_id else None
    assert can_lint(renderer)  # _lintable asked
    try:
        archive = archiver.archive()
        out = lint_alone(renderer, archive, values, key.release, key.namespace, told)
    except RenderFailure:  # the archive could not be built: said by the render
        return rendered
    hit = CachedRender(rendered.manifests, rendered.error, out.lint)
    if not out.transient:
        cache.put(key, hit)
    return hit


class _SingleFlight:
    """One render per cache key at a time: reviews side by side (a replay's changes, where one's
    base is often the next one's head; two PRs on the same develop) ask for the same render at
    once, and the second waits for the first's rather than rendering it again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[int, CacheKey, bool], Future[CachedRender]] = {}

    def once(
        self, key: tuple[int, CacheKey, bool], make: Callable[[], CachedRender]
    ) -> CachedRender:
        with self._lock:
            running = self._running.get(key)
            if running is None:
                mine: Future[CachedRender] = Future()
                self._running[key] = mine
        if running is not None:
            return running.result()  # a render under way in another worker: never a deadlock
        try:
            result = make()
            mine.set_result(result)
            return result
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        finally:
            with self._lock:
                del self._running[key]


_IN_FLIGHT = _SingleFlight()


def _rendered(
    profile: str,
    values: Mapping[str, Any],
    chart_dir: str,
    namespace: str,
    placed: Mapping[str, str],
    hit: CachedRender,
    only: frozenset[str] | None = None,
) -> Rendered:
    lint = lint_messages(hit.lint, chart_dir, placed) if hit.lint is not None else None
    if hit.error is not None or hit.manifests is None:
        err = hit.error or RenderFailure("no output")
        template = (
            template_repo_path(err.template, chart_dir, placed)
            if err.template and "/" in err.template
            else err.template
        )
        missing = is_dependency_missing(err.message)
        error = RenderError(template, err.line, err.message, unavailable=missing)
        return Rendered(profile, error=error, values=values, lint=lint)
    try:
        docs = parse_rendered(hit.manifests, chart_dir, namespace, placed, only)
    except ManifestError as exc:
        error = RenderError(exc.template, exc.line, str(exc))
        return Rendered(profile, error=error, values=values, lint=lint)
    # Here, while the other workers render: most checks read a render's pod templates.
    pod_templates(docs)
    return Rendered(profile, documents=docs, values=values, lint=lint, output=output_id(hit))


def output_id(hit: CachedRender) -> str | None:
    """What tells two renders' output apart, byte for byte: a digest of every template's name and
    text."""
    if hit.manifests is None:
        return None
    digest = hashlib.blake2b(digest_size=16)
    for name, text in sorted(hit.manifests.items()):
        for part in (name, text):
            data = part.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "big"))
            digest.update(data)
    return digest.hexdigest()
