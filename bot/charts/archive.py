"""A chart directory at a commit as an in-memory chart archive, built from git objects.

Helm loads the archive without a filesystem, so `.Files.Get`/`.Files.Glob` can only ever see the
chart's own blobs; every entry is checked before anything is built, and a symlink, a submodule or
a path leaving the chart is refused, never followed.
"""

from __future__ import annotations

import gzip
import tarfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.errors import ChartReviewError
from bot.git.objects import GitReader
from bot.git.tree import SUBMODULE, SYMLINK, Entry
from bot.lru import BoundedCache

EXECUTABLE = "100755"
# Built archives by exactly what they hold, so develop's chart is built once across reviews.
_ARCHIVES: BoundedCache[tuple[tuple[str, str, str], ...], bytes] = BoundedCache(32 << 20, len)
_ARCHIVE_MAX = 8 << 20  # a bigger archive is built each time rather than crowd out the others


class UnsafeTreeError(ChartReviewError):
    """A chart tree holds an entry that could read outside the chart."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}; refused, not followed")
        self.path = path
        self.reason = reason


def _all(_: str) -> bool:
    return True


@dataclass(frozen=True)
class Layer:
    """A chart directory's files placed at `prefix` inside the archive's chart: a `file://`
    dependency at `charts/NAME/`. `keep` filters as chart_archive's does, by the path relative to
    `directory`."""

    directory: str
    prefix: str
    keep: Callable[[str], bool] = _all


def chart_archive(
    repo: GitReader,
    commit: str,
    directory: str,
    keep: Callable[[str], bool] = _all,
    layers: Sequence[Layer] = (),
    extra: Sequence[tuple[str, str, bytes]] = (),
) -> bytes:
    """`directory` at `commit` as a gzip archive of `chart/...`, with each of `layers` added under
    it, and `extra` files (path in the chart, content id, bytes: fetched dependencies' archives).
    Every entry is checked first; `keep` filters on the path relative to the directory
    (`.helmignore`)."""
    wanted = [
        (f"{layer.prefix}{relative}", entry)
        for layer in (Layer(directory, "", keep), *layers)
        for relative, entry in _layer_entries(repo, commit, layer)
    ]
    # What the archive holds, exactly: the same key always builds the same chart.
    key = tuple((relative, entry.mode, entry.oid) for relative, entry in wanted)
    key += tuple((relative, "extra", oid) for relative, oid, _ in extra)
    cached = _ARCHIVES.get(key)
    if cached is not None:
        return cached
    archive = _build(repo, wanted, [(relative, data) for relative, _, data in extra])
    if len(archive) <= _ARCHIVE_MAX:
        _ARCHIVES.put(key, archive)
    return archive


def _layer_entries(repo: GitReader, commit: str, layer: Layer) -> list[tuple[str, Entry]]:
    """The layer's files, paths relative to its directory, in `ls-tree` order; only that
    directory's trees are read."""
    prefix = layer.directory.rstrip("/") + "/" if layer.directory not in ("", ".") else ""
    # What `keep` leaves out (`.helmignore`) Helm never reads: only what it keeps is checked.
    entries = {
        r: e for r, e in repo.listing_under(commit, layer.directory).items() if layer.keep(r)
    }
    for relative, entry in entries.items():
        check_entry(prefix + relative, entry)
    return [(r, e) for r, e in entries.items() if e.kind == "blob"]


def _build(
    repo: GitReader, wanted: list[tuple[str, Entry]], extra: Sequence[tuple[str, bytes]] = ()
) -> bytes:
    parts: list[bytes] = []
    blobs = zip(wanted, repo.blobs([e.oid for _, e in wanted]), strict=True)
    members = [(relative, data, entry.mode == EXECUTABLE) for (relative, entry), data in blobs]
    for relative, data, executable in [*members, *((r, d, False) for r, d in extra)]:
        parts.append(_header(f"chart/{relative}", len(data), executable))
        parts.append(data)
        if len(data) % tarfile.BLOCKSIZE:
            parts.append(bytes(tarfile.BLOCKSIZE - len(data) % tarfile.BLOCKSIZE))
    size = sum(map(len, parts)) + 2 * tarfile.BLOCKSIZE  # two zero blocks end the archive
    parts.append(bytes(2 * tarfile.BLOCKSIZE + -size % tarfile.RECORDSIZE))
    # Level 1: the archive lives for one load; compressing harder only costs time.
    return gzip.compress(b"".join(parts), compresslevel=1, mtime=0)


def _header(name: str, size: int, executable: bool) -> bytes:
    """A member's header as `tarfile` writes it (the same bytes), built directly: `tarfile`'s
    per-member work cost more than the rest of the archive. What a plain header cannot hold (a
    long or non-ASCII name, a size past 11 octal digits) is left to `tarfile`, which adds an
    extended header."""
    if len(name) >= 100 or not name.isascii() or size > 0o77777777777:
        info = tarfile.TarInfo(name)
        info.size = size
        info.mode = 0o755 if executable else 0o644
        return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    head = b"".join(
        (
            name.encode("ascii").ljust(100, b"\0"),
            b"0000755\0" if executable else b"0000644\0",
            b"0000000\0" * 2,  # uid, gid
            b"%011o\0" % size,
            b"00000000000\0",  # mtime
        )
    )
    return head + b"%06o\0 " % (sum(head) + _TAIL_SUM) + _TAIL


# A header's fields after the checksum, the same for every member: a regular file, no link name,
# the POSIX magic, no owner names or device numbers, no name prefix. The checksum counts its own
# field as eight spaces.
_TAIL = b"0" + bytes(100) + b"ustar\x0000" + bytes(247)
_TAIL_SUM = sum(_TAIL) + 8 * ord(" ")


def check_entry(path: str, entry: Entry) -> None:
    if entry.mode == SYMLINK:
        raise UnsafeTreeError(path, "is a symbolic link")
    if entry.mode == SUBMODULE:
        raise UnsafeTreeError(path, "is a submodule")
    if entry.kind not in ("blob", "tree"):
        raise UnsafeTreeError(path, "is not a regular file")
    parts = path.split("/")
    if path.startswith("/") or ".." in parts:
        raise UnsafeTreeError(path, "leaves the chart directory")
