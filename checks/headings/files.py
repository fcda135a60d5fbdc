"""The files a heading reference can name, read from one tree: which paths a written name may mean,
and each file's headings, read once per review."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from bot.git.objects import Tree
from bot.lru import BoundedCache, IdentityMemo
from bot.textlines import capped_lines
from checks.headings.filetext import FileText
from checks.headings.slugs import Anchor, anchors
from checks.headings.text import Heading, find_headings, is_markdown

# Files larger than this are data, not prose or code a person annotates; skipping them bounds the
# cost of the whole-tree scan that a removed heading triggers.
MAX_TEXT_BYTES = 1_000_000
# Trees whose paths are kept by the tree object: a review lists each of its two trees several times
# (its files, its index, the names a reference may mean), and a listing of 3,000 paths costs 10 ms.
MAX_LISTED_TREES = 8
# The characters of the files one tree of a review keeps read (FileText, its lines weighed too): a PR
# may change thousands of files of up to MAX_TEXT_BYTES each.
REVIEW_TEXT_CHARS = 16 * 2**20

_PATHS: IdentityMemo[Tree, frozenset[str]] = IdentityMemo(MAX_LISTED_TREES)


def tree_paths(tree: Tree) -> frozenset[str]:
    """Every file path of the tree (a tree does not change once read)."""
    return _PATHS.get_or_make(tree, lambda t: frozenset(t.paths()))


def readable_data(tree: Tree, path: str) -> bytes | None:
    """The file's bytes, or None when it is missing, binary (holds a NUL byte) or too large."""
    return readable(tree.read(path))


def readable(data: bytes | None) -> bytes | None:
    """`data` if it is a file the check reads (`readable_data`), else None."""
    if data is None or len(data) > MAX_TEXT_BYTES or b"\0" in data:
        return None
    return data


def readable_text(tree: Tree, path: str) -> str | None:
    """The file as the check reads it (`read_text`), or None when it is missing, binary or too
    large (`readable_data`)."""
    data = readable_data(tree, path)
    return None if data is None else read_text(data.decode("utf-8", errors="replace"))[0]


def read_text(text: str) -> tuple[str, tuple[int, ...]]:
    """A file's or the PR's text as the check reads it, and the lines it cut: `\\r\\n` read as a line
    break as Markdown reads it (git's numbers stay), each line read to MAX_LINE_CHARS characters."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return capped_lines(text)


def heading_pattern(texts: Iterable[str], whole_words: bool = True) -> re.Pattern[str]:
    """Matches any of `texts` as whole words, with any whitespace between them; without
    `whole_words`, wherever its words stand so (what any text quoting one holds, word boundaries
    aside)."""
    parts = [r"\s+".join(re.escape(word) for word in text.split()) for text in texts]
    if not parts:
        return re.compile(r"(?!)")
    either = "(?:" + "|".join(sorted(parts, key=len, reverse=True)) + ")"
    return re.compile(rf"(?<!\w){either}(?!\w)" if whole_words else either)


class TreeFiles:
    """One tree's paths and headings, cached: a review asks of the same files many times."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        # Built on the first ask for a name that is no path of the tree: many reviews make none.
        self._by_basename: dict[str, tuple[str, ...]] | None = None
        self._headings: dict[str, tuple[Heading, ...]] = {}
        self._anchors: dict[str, tuple[Anchor, ...]] = {}
        self._files: BoundedCache[str, tuple[FileText | None]] = BoundedCache(
            REVIEW_TEXT_CHARS, lambda kept: 64 + (2 * len(kept[0].text) if kept[0] else 0)
        )

    def file(self, path: str) -> FileText | None:
        """The file read as text (`readable_text`), once per review while the budget holds it."""
        kept = self._files.get(path)
        if kept is None:
            data = readable_data(self.tree, path)
            text, cut = read_text(data.decode("utf-8", errors="replace")) if data else ("", ())
            kept = (FileText(path, text, cut) if data is not None else None,)
            self._files.put(path, kept)
        return kept[0]

    def text(self, path: str) -> str | None:
        file = self.file(path)
        return file.text if file is not None else None

    @property
    def paths(self) -> frozenset[str]:
        """Every file of the tree, listed on the first ask: a review whose references name files by
        their paths (or name none) asks `has` alone, and a listing of a 3,000-file tree, new at
        every change of a replay, cost more than the rest of the check."""
        return tree_paths(self.tree)

    def has(self, path: str) -> bool:
        """Whether `path` is in `paths`, asked without listing the tree."""
        return self.tree.is_file(path)

    def candidates(self, name: str, from_path: str | None = None) -> tuple[str, ...]:
        """The files `name` may mean: the repository path, else the path relative to the file that
        wrote it, else every file with that basename (or path suffix)."""
        if self.has(name):
            return (name,)
        if from_path is not None:
            relative = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), name))
            if self.has(relative):
                return (relative,)
        same_name = self._named(posixpath.basename(name))
        if "/" not in name:
            return same_name
        # A path ending in `/a/b.md` is named `b.md`: the basename narrows, the suffix decides.
        return tuple(p for p in same_name if p.endswith("/" + name))

    def _named(self, basename: str) -> tuple[str, ...]:
        """Every file called `basename`, sorted: from an index of the tree's listing, made on the
        first ask (directories git remembers by name cost more, a name at a time: a template's
        comments name dozens of path-like things, `app.kubernetes.io` among them)."""
        if self._by_basename is None:
            index: dict[str, list[str]] = {}
            for path in sorted(self.paths):
                index.setdefault(posixpath.basename(path), []).append(path)
            self._by_basename = {name: tuple(paths) for name, paths in index.items()}
        return self._by_basename.get(basename, ())

    def headings(self, path: str) -> tuple[Heading, ...]:
        if path not in self._headings:
            text = self.text(path)
            self._headings[path] = find_headings(path, text) if text is not None else ()
        return self._headings[path]

    def anchors(self, path: str) -> tuple[Anchor, ...]:
        """The anchors of a Markdown file (none for any other file: GitHub renders no headings)."""
        if path not in self._anchors:
            text = self.text(path) if is_markdown(path) else None
            self._anchors[path] = anchors(text) if text is not None else ()
        return self._anchors[path]

    def text_lines(self, path: str, phrase: str, besides: int | None = None) -> tuple[int, ...]:
        """The lines of `path` where `phrase` stands as text (heading or not), other than
        `besides` (the line that quotes it, when the file quotes itself)."""
        text = self.text(path)
        if text is None:
            return ()
        pattern = heading_pattern([phrase])
        found = (text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text))
        return tuple(n for n in dict.fromkeys(found) if n != besides)

    def lines_of(self, path: str, text: str, loose: bool = False) -> tuple[str, tuple[int, ...]]:
        """Where `text` is a heading of `path`: (the heading matched, its lines). A loose quote
        (bare prose) may carry words around the heading; the longest heading it holds is taken."""
        headings = self.headings(path)
        exact = tuple(h.line for h in headings if h.text == text)
        if exact or not loose:
            return text, exact
        inside = [h.text for h in headings if f" {h.text} " in f" {text} "]
        if not inside:
            return text, ()
        best = max(inside, key=len)
        return best, tuple(h.line for h in headings if h.text == best)
