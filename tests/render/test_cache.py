"""The render cache on disk: bounded by its cap, least recently used out first, and never a reason
for a review to fail (a write that fails leaves no temp file and only logs)."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest

from bot.render.base import RenderFailure
from bot.render.cache import STALE_TMP_SECONDS, CachedRender, CacheKey, RenderCache
from bot.render.lint import LintEntry, LintSeverity

RENDER = CachedRender({"t/a.yaml": "kind: Pod\n" + "x" * 1000}, None)
ENTRY_BYTES = len(json.dumps({"manifests": RENDER.manifests, "error": None}).encode())


def key(n: int) -> CacheKey:
    return CacheKey(f"tree{n}", "values", "helm", "release", "default")


def on_disk(directory: Path) -> list[Path]:
    return sorted(directory.iterdir())


def disk_total(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.iterdir())


def test_a_render_survives_a_restart_with_its_error(tmp_path: Path) -> None:
    RenderCache(tmp_path).put(key(1), CachedRender(None, RenderFailure("boom", "t/a.yaml", 3)))

    found = RenderCache(tmp_path).get(key(1))

    assert found is not None and found.manifests is None and found.error is not None
    assert (found.error.message, found.error.template, found.error.line) == ("boom", "t/a.yaml", 3)


def test_many_distinct_renders_never_exceed_the_cap(tmp_path: Path) -> None:
    cap = 5 * ENTRY_BYTES
    cache = RenderCache(tmp_path, max_bytes=cap)
    for n in range(40):
        cache.put(key(n), RENDER)
        assert disk_total(tmp_path) <= cap

    # Past the cap, eviction goes down to 90% of it: 3 of the oldest stay, beside the newest.
    assert {p.name for p in on_disk(tmp_path)} == {
        f"{key(n).digest}.json" for n in (36, 37, 38, 39)
    }
    assert RenderCache(tmp_path).get(key(39)) == RENDER


def _used(directory: Path, n: int, ago: float) -> None:
    when = time.time() - ago
    os.utime(directory / f"{key(n).digest}.json", (when, when))


def test_a_hit_keeps_an_entry_and_the_least_recently_used_go(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path, max_bytes=3 * ENTRY_BYTES)
    for n in range(3):
        cache.put(key(n), RENDER)
    for n, ago in ((0, 300), (1, 200), (2, 100)):  # 0 the least recently used
        _used(tmp_path, n, ago)
    restarted = RenderCache(tmp_path, max_bytes=3 * ENTRY_BYTES)  # the order from the mtimes

    assert restarted.get(key(0)) == RENDER  # used again: now the most recently used
    restarted.put(key(3), RENDER)

    assert {p.name for p in on_disk(tmp_path)} == {f"{key(n).digest}.json" for n in (0, 3)}


def test_the_size_on_disk_is_counted_at_startup(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path)
    for n in range(3):
        cache.put(key(n), RENDER)

    assert RenderCache(tmp_path).disk_bytes == 3 * ENTRY_BYTES


def test_a_temp_file_left_by_a_crash_is_removed_at_startup(tmp_path: Path) -> None:
    stale = tmp_path / f".{key(1).digest}.123.456.tmp"
    stale.write_text('{"manif')
    old = time.time() - STALE_TMP_SECONDS - 1
    os.utime(stale, (old, old))
    live = tmp_path / f".{key(2).digest}.124.457.tmp"  # another process writing it now
    live.write_text('{"manif')

    RenderCache(tmp_path)

    assert on_disk(tmp_path) == [live]


def test_a_failed_write_leaves_no_temp_file_and_the_render_is_still_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache = RenderCache(tmp_path)

    def half_written(self: Path, data: bytes) -> int:
        with self.open("wb") as handle:
            handle.write(data[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "write_bytes", half_written)
    cache.put(key(1), RENDER)

    assert on_disk(tmp_path) == []
    assert cache.get(key(1)) == RENDER  # from memory
    assert cache.disk_bytes == 0
    assert "not stored: No space left on device" in caplog.text
    monkeypatch.undo()
    cache.put(key(2), RENDER)  # space back: stored again
    assert RenderCache(tmp_path).get(key(2)) == RENDER


def test_an_entry_larger_than_the_cap_is_kept_in_memory_only(tmp_path: Path) -> None:
    cache = RenderCache(tmp_path, max_bytes=ENTRY_BYTES - 1)
    cache.put(key(1), RENDER)

    assert on_disk(tmp_path) == []
    assert cache.get(key(1)) == RENDER


def test_an_unusable_directory_leaves_a_cache_in_memory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    cache = RenderCache(tmp_path / "file" / "renders")
    cache.put(key(1), RENDER)

    assert cache.get(key(1)) == RENDER


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / f"{key(1).digest}.json").write_text("[1, 2]")

    assert RenderCache(tmp_path).get(key(1)) is None


def test_the_cap_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_bytes must be positive"):
        RenderCache(tmp_path, max_bytes=0)


def test_memory_holds_renders_up_to_its_bytes_the_least_recently_used_going_first() -> None:
    """Memory is bounded by what the renders weigh, not only by their count: a chart of large
    configs renders megabytes a profile."""
    big = CachedRender({"t/cm.yaml": "kind: ConfigMap\n" + "x" * 100_000}, None)
    cache = RenderCache(memory_bytes=350_000)
    for n in range(3):
        cache.put(key(n), big)
    assert cache.get(key(0)) == big  # used again: the least recently used is now key(1)
    cache.put(key(3), big)
    assert [cache.get(key(n)) is not None for n in range(4)] == [True, False, True, True]
    cache.put(key(4), CachedRender({"t/huge.yaml": "x" * 1_000_000}, None))
    assert cache.get(key(4)) is not None  # the newest stays, alone, even past the bound
    assert all(cache.get(key(n)) is None for n in range(4))
    small = RenderCache(max_entries=2)
    for n in range(3):
        small.put(key(n), RENDER)
    assert [small.get(key(n)) is not None for n in range(3)] == [False, True, True]


def test_a_render_without_its_lint_never_replaces_the_same_render_with_it(tmp_path: Path) -> None:
    # A review asks a profile's render and its lint apart, at once: the render may end last.
    linted = CachedRender(
        RENDER.manifests,
        None,
        (LintEntry(LintSeverity.WARNING, "Chart.yaml", "icon is recommended"),),
    )
    cache = RenderCache(tmp_path)
    cache.put(key(1), linted)
    cache.put(key(1), RENDER)
    assert cache.get(key(1)) == linted
    assert RenderCache(tmp_path).get(key(1)) == linted  # on disk too: the next review's
    cache.put(key(2), RENDER)
    cache.put(key(2), linted)  # in the other order, the lint is kept as ever
    assert RenderCache(tmp_path).get(key(2)) == linted
