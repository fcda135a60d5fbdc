"""An index of one tree's files by the words and link fragments they hold: where the search for
whoever still quotes or links a heading the PR removes need look, so that a review reads the few
files that may refer to it instead of every file of the repository.

The facts are cheap on purpose: building an index reads every file once, as the scan it replaces
did, and must not cost more than that scan's regex did (a CLI review is always cold). So a file's
facts are its ASCII word runs and the starts of its `#` fragments, not its parsed headings, quotes
and links; a query answers a superset of the files the check's own prefilters accept, and the
check still reads and judges each file it names exactly as it would without the index.

An index is kept per root tree id (bounded): develop's tree is shared by every PR based on it, and
a PR's next push has the same merge base. A head is indexed from its base's index by the paths the
diff between them changes, reading only those; a tree with neither kept (a replay's next base,
develop a few merges on) from the last index its repository kept, by the paths `git diff-tree`
says differ. A tree that reads many files in one request
(`read_many`, where it has one) is read in batches."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial

from bot.git.objects import ChangedFile, Tree
from bot.lru import BoundedCache, IdentityMemo
from checks.headings.files import readable, tree_paths

# Every byte but an ASCII letter, digit or `_` becomes a space. A heading matched as whole words
# (files.heading_pattern) has each of its ASCII word runs as a whole run of the file's bytes: a
# non-ASCII character or any punctuation around it is a separator here too. Splitting bytes costs
# a fraction of a Unicode `\w` scan, and that scan's cost is what a cold review cannot afford.
_WORD_BYTES = frozenset(b"0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_SPLIT = bytes(b if b in _WORD_BYTES else 0x20 for b in range(256))
# What follows each `#` of the lower-cased text, as far as an anchor's leading run of slug
# characters goes: a file that holds `#name` holds a fragment starting with that run of `name`.
FRAGMENT_RE = re.compile(r"#([\w-]*)")
LEAD_RE = re.compile(r"[\w-]*")

# Facts kept, across every tree: a file counts 1 plus its distinct words and fragments, ~100 bytes
# each (measured: prometheus-community/helm-charts' 1,118 files weigh 135,700, 13 MB). So at most
# ~100 MB, and less: a head indexed from its base shares the facts of the files it leaves alone.
MAX_INDEXED = 1_000_000
# Indexes found by the tree object itself: a review asks up to three times of its two trees, and a
# tree too large for MAX_INDEXED is still indexed once per review, not once per ask.
MAX_PER_REVIEW = 8
# Files asked of a tree at once where it reads many in one request: what one batch holds in memory.
READ_BATCH = 256


@dataclass(frozen=True)
class FileFacts:
    """What one readable file is made of, as far as a quote or link of a heading goes."""

    words: frozenset[bytes]  # its ASCII word runs
    fragments: frozenset[str]  # the lower-cased runs of slug characters after each `#`

    @property
    def weight(self) -> int:
        return 1 + len(self.words) + len(self.fragments)


@dataclass(frozen=True)
class TreeIndex:
    """The facts of every file of a tree that the check reads (files.readable)."""

    files: Mapping[str, FileFacts]
    weight: int

    def may_quote(self, texts: Iterable[str]) -> frozenset[str]:
        """Every file `heading_pattern(texts)` may match: those holding all the ASCII words of one
        of `texts` (every file for a text with none, a heading in another script)."""
        needs = [words(text.encode("utf-8", "replace")) for text in texts]
        if not all(needs):
            return frozenset(self.files)
        return frozenset(p for p, f in self.files.items() if any(need <= f.words for need in needs))

    def may_link(self, anchors: Iterable[str]) -> frozenset[str]:
        """Every file whose lower-cased text may hold `#` and one of `anchors` (lower-cased)."""
        leads = tuple({_lead(anchor) for anchor in anchors})
        if not leads:
            return frozenset()
        return frozenset(
            p for p, f in self.files.items() if any(fr.startswith(leads) for fr in f.fragments)
        )


def words(data: bytes) -> frozenset[bytes]:
    return frozenset(data.translate(_SPLIT).split())


def _lead(anchor: str) -> str:
    match = LEAD_RE.match(anchor)
    return match.group() if match else ""


def file_facts(data: bytes) -> FileFacts:
    fragments: frozenset[str] = frozenset()
    if b"#" in data:  # decoded as files.readable_text decodes it
        fragments = frozenset(FRAGMENT_RE.findall(data.decode("utf-8", errors="replace").lower()))
    return FileFacts(words(data), fragments)


Kept = BoundedCache[str, TreeIndex]

KEPT: Kept = BoundedCache(MAX_INDEXED, lambda i: i.weight)
_BY_OBJECT: IdentityMemo[Tree, TreeIndex] = IdentityMemo(MAX_PER_REVIEW)
_ROOT_IDS: IdentityMemo[Tree, str | None] = IdentityMemo(MAX_PER_REVIEW)


def tree_index(
    tree: Tree,
    beside: Tree | None = None,
    changes: Iterable[ChangedFile] = (),
    kept: Kept = KEPT,
) -> TreeIndex:
    """The index of `tree`: kept, else made from the index of `beside` (the tree on the other side
    of `changes`, itself kept or built first: a base is what other reviews share) by reading the
    changed paths again, else built by reading every file."""
    made = partial(_kept_or_made, beside=beside, changes=tuple(changes), kept=kept)
    return _BY_OBJECT.get_or_make(tree, made)


def _kept_or_made(
    tree: Tree, beside: Tree | None, changes: tuple[ChangedFile, ...], kept: Kept
) -> TreeIndex:
    key = _ROOT_IDS.get_or_make(tree, root_id)
    found = kept.get(key) if key is not None else None
    if found is not None:
        return found
    changed = changed_paths(changes)
    if beside is not None and _differ_only_in(beside, tree, changed):
        made = updated_index(tree_index(beside, kept=kept), tree, changed)
    else:
        made = _from_latest(tree, kept) or build_index(tree)
    if key is not None:
        kept.put(key, made)
        if (home := _home(tree)) is not None:
            _LATEST.put(home, key)
    return made


# The root tree id of the index each repository kept last, by the repository's path: a tree with no
# index kept and none beside it to start from (a replay's next base, develop after a few merges) is
# indexed from that one by the paths git says differ, rather than by reading every file.
_LATEST: BoundedCache[str, str] = BoundedCache(64)


def _from_latest(tree: Tree, kept: Kept) -> TreeIndex | None:
    """The tree's index made from the last one its repository kept, where the tree can say which
    paths differ from that one's tree (bot.git.tree's GitTree can; the Tree protocol does not)."""
    home = _home(tree)
    latest = _LATEST.get(home) if home is not None else None
    previous = kept.get(latest) if latest is not None else None
    changed_from = getattr(tree, "paths_changed_from", None)
    if previous is None or latest is None or not callable(changed_from):
        return None
    changed = changed_from(latest)
    return updated_index(previous, tree, changed) if isinstance(changed, frozenset) else None


def _home(tree: Tree) -> str | None:
    """The path of the repository the tree is of, where it says (a GitTree's repo)."""
    path = getattr(getattr(tree, "repo", None), "path", None)
    return str(path) if path is not None else None


def build_index(tree: Tree) -> TreeIndex:
    return updated_index(TreeIndex({}, 0), tree, tree_paths(tree))


def updated_index(previous: TreeIndex, tree: Tree, changed: frozenset[str]) -> TreeIndex:
    """`previous` with the `changed` paths read again from `tree` (gone where the tree has no such
    readable file)."""
    files = {p: f for p, f in previous.files.items() if p not in changed}
    for path, data in _contents(tree, sorted(changed)):
        if (kept := readable(data)) is not None:
            files[path] = file_facts(kept)
    return TreeIndex(files, sum(f.weight for f in files.values()))


def _contents(tree: Tree, paths: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """Each path's blob, in batches where the tree can read many at once (one request to git for
    a batch, where one at a time is a round trip per file: most of a cold index's cost)."""
    read_many = getattr(tree, "read_many", None)
    if not callable(read_many):
        yield from ((path, tree.read(path)) for path in paths)
        return
    for start in range(0, len(paths), READ_BATCH):
        batch = paths[start : start + READ_BATCH]
        yield from zip(batch, read_many(batch), strict=True)


def changed_paths(changes: Iterable[ChangedFile]) -> frozenset[str]:
    """Every path a diff touches, on either side (a rename touches both)."""
    return frozenset(path for c in changes for path in (c.path, c.old_path) if path is not None)


def _differ_only_in(a: Tree, b: Tree, changed: frozenset[str]) -> bool:
    """The trees list the same files outside `changed`: a diff that left one out (a context built
    from part of a diff, say) would make the index wrong where the paths show it."""
    return tree_paths(a) - changed == tree_paths(b) - changed


def root_id(tree: Tree) -> str | None:
    """The tree's id, where the tree knows it (bot.git.repo's GitTree does; the Tree protocol does
    not promise it): content-addressed, so one key means the same files in any repository."""
    tree_id = getattr(tree, "tree_id", None)
    root = tree_id("") if callable(tree_id) else None
    return root if isinstance(root, str) else None
