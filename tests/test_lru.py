"""The bounded memo: it forgets the least recently used entry first."""

from __future__ import annotations

from bot.lru import BoundedCache


def test_forgets_the_least_recently_used() -> None:
    cache: BoundedCache[str, int] = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the oldest
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c"), len(cache)) == (1, None, 3, 2)


def test_get_or_make_makes_once() -> None:
    cache: BoundedCache[str, int] = BoundedCache(4)
    made: list[str] = []
    for _ in range(3):
        cache.get_or_make("k", lambda: made.append("k") or 7)
    assert (cache.get("k"), made) == (7, ["k"])
