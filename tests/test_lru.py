"""The bounded memo: it forgets the least recently used entry first."""

from __future__ import annotations

import contextvars
import gc
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

from bot.lru import BoundedCache, IdentitiesMemo, IdentityMemo, WeakIdentityMemo
from bot.memos import Memos


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


def test_threads_making_one_key_at_once_all_get_the_first_stored() -> None:
    """Both threads make the value (neither waits on the other's make), and both get the one
    stored first: callers that share parsed YAML by identity then share one object."""
    cache: BoundedCache[str, list[str]] = BoundedCache(4)
    both_making = threading.Barrier(2)

    def make() -> list[str]:
        both_making.wait(timeout=10)  # each make runs while the other's is under way
        return ["parsed"]

    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda _: cache.get_or_make("k", make), range(2)))
    assert got[0] is got[1] is cache.get("k")


def test_a_weighed_cache_keeps_at_most_its_weight() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(10, len)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    cache.put("c", b"1234")  # 12 bytes: "a" goes
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, b"1234", b"1234")
    cache.put("b", b"1")  # replacing an entry counts its new weight only
    cache.put("d", b"12345")
    assert (cache.get("b"), cache.get("c"), cache.get("d")) == (b"1", b"1234", b"12345")


def test_identity_memo_finds_the_same_object_only() -> None:
    memo: IdentityMemo[list[int], int] = IdentityMemo(2)
    made: list[int] = []

    def total(items: list[int]) -> int:
        made.append(1)
        return sum(items)

    first, equal = [1, 2], [1, 2]
    assert (memo.get_or_make(first, total), memo.get_or_make(first, total)) == (3, 3)
    assert memo.get_or_make(equal, total) == 3  # equal but another object: made again
    assert len(made) == 2
    memo.get_or_make([5], total)  # a third entry: the oldest goes
    assert len(memo) == 2
    memo.get_or_make(first, total)
    assert len(made) == 4


def test_a_memo_of_several_objects_finds_them_by_identity_and_extra() -> None:
    memo: IdentitiesMemo[int] = IdentitiesMemo(2)
    made: list[int] = []

    def make(n: int) -> int:
        made.append(n)
        return n

    a, b, equal = {"x": 1}, {"y": 2}, {"x": 1}
    assert memo.get_or_make((a, b), "k", lambda: make(1)) == 1
    assert memo.get_or_make((a, b), "k", lambda: make(2)) == 1  # the same objects: found
    assert memo.get_or_make((equal, b), "k", lambda: make(3)) == 3  # equal, not the same
    assert memo.get_or_make((a, b), "other", lambda: make(4)) == 4  # another extra
    assert memo.get_or_make((a, b), "k", lambda: make(5)) == 5  # two entries kept: it went first
    assert made == [1, 3, 4, 5]


def test_a_memo_keeps_its_entries_in_the_store_in_use() -> None:
    """Entries go to the current store (bot/memos.py): another store starts empty, and each
    keeps its own for the same key."""
    cache: BoundedCache[str, int] = BoundedCache(4)
    cache.put("k", 1)
    other = Memos()
    with other.active():
        assert (len(cache), cache.get("k")) == (0, None)
        cache.put("k", 2)
        assert cache.get("k") == 2
    assert cache.get("k") == 1
    assert other.entries(cache) == 1


def test_a_store_cleared_empties_every_memo_it_holds() -> None:
    cache: BoundedCache[str, int] = BoundedCache(4)
    memo: IdentityMemo[object, int] = IdentityMemo(4)
    store = Memos()
    with store.active():
        cache.put("k", 1)
        memo.get_or_make(object(), lambda _: 1)
        store.clear()
        assert (len(cache), len(memo)) == (0, 0)
    assert store.entries(cache) == 0


def test_a_thread_started_in_a_copy_of_the_context_uses_its_store() -> None:
    cache: BoundedCache[str, int] = BoundedCache(4)
    store = Memos()
    with store.active(), ThreadPoolExecutor(1) as pool:
        pool.submit(contextvars.copy_context().run, cache.put, "k", 1).result()
        assert cache.get("k") == 1
    assert cache.get("k") is None  # the process's store never had it


class _Render:
    """Stands for a review's render: any object a weak reference can name."""


def test_a_weak_identity_memo_makes_once_per_objects_and_keeps_nothing_alive() -> None:
    memo: WeakIdentityMemo[str] = WeakIdentityMemo()
    made: list[str] = []

    def make(label: str) -> str:
        made.append(label)
        return label

    a, b = _Render(), _Render()
    assert memo.get_or_make((a, b), "p", lambda: make("ab")) == "ab"
    assert memo.get_or_make((a, b), "p", lambda: make("again")) == "ab"
    assert memo.get_or_make((b, a), "p", lambda: make("ba")) == "ba"  # the order counts
    assert memo.get_or_make((a, b), "q", lambda: make("abq")) == "abq"  # and the extra
    assert made == ["ab", "ba", "abq"]
    probe = weakref.ref(a)
    del a
    gc.collect()
    assert probe() is None  # the memo held no strong reference
    assert len(memo) == 0  # every entry naming it went with it


def test_lookups_without_the_lock_race_evictions_safely() -> None:
    """`get` takes no lock (a review asks tens of thousands of times): threads looking up while
    others put and evict see each value whole or not at all, and the weight stays exact."""
    import sys
    import threading

    cache: BoundedCache[int, bytes] = BoundedCache(64, len)
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(20_000):
                key = (i * 7 + seed) % 40
                if i % 3 == 0:
                    cache.put(key, bytes(key % 9 + 1))
                else:
                    value = cache.get(key)
                    assert value is None or len(value) == key % 9 + 1
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    held = [cache.get(key) for key in cache.held_keys()]
    assert cache.weight() == sum(len(v or b"") for v in held) <= 64
