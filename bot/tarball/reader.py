"""The one reader of chart archives (`.tgz`) in this process: streaming, capped, and refusing past
its caps (bot/tarball/limits.py).

A chart archive is PR content (a vendored `charts/redis-1.0.0.tgz`) or a server's (a fetched
dependency). Read whole, two million empty members cost a review minutes and a gigabyte while
their sizes summed to nothing. Here the gzip stream is read block by block: one member's header at
a time, its data skipped in chunks unless the caller asked for it, and the members, header bytes
and decompressed bytes counted against a `Budget` as they go. Past a cap, `OverCap`: the archive
is refused, and the count it stopped at is said.

What the caller sees is what Helm's loader sees: a member's `path` is the name Helm gives it in
its chart (the archive's top directory dropped, cleaned); directories and extended headers are
not members; a subchart archive inside (`charts/common-2.0.0.tgz`) is read too, streaming from
the bytes of the outer one, as Helm loads it. A name Helm refuses (absolute, leaving the chart)
makes the archive unreadable: Helm would not load it.
"""

from __future__ import annotations

import gzip
import io
import posixpath
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, NoReturn

from bot.tarball.headers import (
    BLOCK,
    GNU_LONG_NAME,
    GNU_SPARSE,
    PAX,
    PAX_GLOBAL,
    SPECIAL,
    ZERO_BLOCK,
    ArchiveRefused,
    Header,
    Unreadable,
    decimal,
    finished,
    parse_header,
    pax_records,
    shown,
)
from bot.tarball.limits import LIMITS, ArchiveLimits, mib

_SKIP_CHUNK = 1 << 20  # data skipped is read this much at a time: memory stays flat
_GZIP_MAGIC = b"\x1f\x8b"
# Where Helm's loader finds a subchart archive in a chart: `charts/NAME.tgz`, also inside an
# unpacked subchart; a name starting with `_` or `.` is not a subchart.
_SUBCHART_ARCHIVE_RE = re.compile(r"^(?:charts/[^/._][^/]*/)*charts/[^/._][^/]*\.tgz$")
_DRIVE_RE = re.compile(r"^[a-zA-Z]:/")
ONE_ARCHIVE = "one archive and the archives inside it"
ONE_CHART = "one chart's archives together"


@dataclass(frozen=True)
class Cost:
    """What reading cost: the counts a budget caps."""

    members: int = 0
    header_bytes: int = 0
    decompressed_bytes: int = 0


class OverCap(ArchiveRefused):
    """Past a cap: `cost` is where reading stopped."""

    def __init__(self, why: str, cost: Cost) -> None:
        super().__init__(why)
        self.cost = cost


class Budget:
    """The counts so far against the caps, for `scope`: one archive with the archives nested in
    it, or one chart's archives together (`charge` adds an archive's cost)."""

    def __init__(self, limits: ArchiveLimits = LIMITS, scope: str = ONE_ARCHIVE) -> None:
        self.limits, self.scope = limits, scope
        self.members = self.header_bytes = self.decompressed_bytes = 0

    @property
    def cost(self) -> Cost:
        return Cost(self.members, self.header_bytes, self.decompressed_bytes)

    def count_member(self) -> None:
        self.members += 1
        self._check()

    def count_header(self, size: int) -> None:
        self.header_bytes += size
        self._check()

    def count_decompressed(self, size: int) -> None:
        self.decompressed_bytes += size
        self._check()

    def charge(self, cost: Cost) -> None:
        """Adds what reading another archive cost (one already read, or remembered)."""
        self.members += cost.members
        self.header_bytes += cost.header_bytes
        self.decompressed_bytes += cost.decompressed_bytes
        self._check()

    def _check(self) -> None:
        limits = self.limits
        if self.members > limits.members:
            self._over(f"more than {limits.members:,} members")
        if self.header_bytes > limits.header_bytes:
            self._over(f"more than {mib(limits.header_bytes)} of headers")
        if self.decompressed_bytes > limits.decompressed_bytes:
            self._over(f"more than {mib(limits.decompressed_bytes)} unpacked")

    def _over(self, what: str) -> NoReturn:
        raise OverCap(f"{what}, the most the review reads of {self.scope}", self.cost)


@dataclass(frozen=True)
class Member:
    """A file of the archive as Helm loads it. `within`: the subchart archives holding it, by
    their names in their own archives, outermost first; `data` when the caller asked for it."""

    path: str
    name: str
    size: int
    within: tuple[str, ...] = ()
    data: bytes | None = None

    @property
    def location(self) -> str:
        """`redis/charts/common-2.0.0.tgz › common/values.schema.json`."""
        return " › ".join(shown(n) for n in (*self.within, self.name))


def _nothing(_: Member) -> bool:
    return False


def members(
    data: bytes, want: Callable[[Member], bool] = _nothing, budget: Budget | None = None
) -> Iterator[Member]:
    """Every file of the gzipped tar archive `data`, and of the subchart archives inside it, in
    archive order; each with its content when `want(member)` says so (up to the limits'
    `held_bytes`). Raises OverCap past a cap of `budget`, Unreadable where Helm could not load
    the archive either."""
    if not data.startswith(_GZIP_MAGIC):
        raise Unreadable("not gzip-compressed")
    budget = budget if budget is not None else Budget()
    yield from _walk(_Stream(io.BytesIO(data), budget), want, budget, ())


def _walk(
    stream: _Stream, want: Callable[[Member], bool], budget: Budget, within: tuple[str, ...]
) -> Iterator[Member]:
    """One archive's members. Its files' sizes count against Helm's per-archive limit; every
    other count against the budget shared with the archives around and inside it."""
    limits, files, pending = budget.limits, 0, _Pending()
    while (block := stream.block()) is not None:
        budget.count_member()
        budget.count_header(BLOCK)
        header = parse_header(block)
        if header.typeflag in SPECIAL:
            pending.read(header, stream, budget, within)
            continue
        member = pending.apply(header, within)
        if member.directory:
            stream.skip(member.size)
            continue
        files += member.size
        if files > limits.file_bytes:
            raise OverCap(
                f"{_where(within)}files of more than {mib(limits.file_bytes)} together, Helm's "
                "own limit for one archive (MaxDecompressedChartSize)",
                budget.cost,
            )
        found = Member(helm_path(member.name, within), member.name, member.size, within)
        if _SUBCHART_ARCHIVE_RE.match(found.path):
            yield found
            yield from _nested(stream, found, want, budget)
        elif member.size <= limits.held_bytes and want(found):
            data = stream.read(member.size)
            stream.skip_padding(member.size)
            yield Member(found.path, found.name, found.size, within, data)
        else:
            yield found
            stream.skip(member.size)


def _nested(
    stream: _Stream, archive: Member, want: Callable[[Member], bool], budget: Budget
) -> Iterator[Member]:
    """A subchart archive's members, read from the outer archive's stream as it goes: the outer
    bytes count as the outer archive's, the unpacked ones as the nested archive's."""
    within = (*archive.within, archive.name)
    if len(within) > budget.limits.depth:
        raise OverCap(
            f"{_where(within)}archives nested more than {budget.limits.depth} deep, the most the "
            "review follows",
            budget.cost,
        )
    inner = _Slice(stream, archive.size)
    source = io.BufferedReader(inner)
    if source.peek(len(_GZIP_MAGIC))[: len(_GZIP_MAGIC)] != _GZIP_MAGIC:
        raise Unreadable(f"{_where(within)}not gzip-compressed")
    yield from _walk(_Stream(source, budget), want, budget, within)
    stream.discard(inner.remaining)
    stream.skip_padding(archive.size)


class _Pending:
    """What extended headers say of the next member: Go's reader takes the last PAX header's
    `path` and `size`, then a GNU long name over that; a global header is handed on (Helm skips
    it) and drops them."""

    def __init__(self) -> None:
        self.records: dict[str, str] = {}
        self.long_name: str | None = None

    def read(
        self, header: Header, stream: _Stream, budget: Budget, within: tuple[str, ...]
    ) -> None:
        if header.size > budget.limits.special_bytes:
            raise Unreadable(
                f"{_where(within)}an extended header of {header.size:,} bytes, more than the "
                f"{mib(budget.limits.special_bytes)} Go's tar reader (and so Helm) accepts"
            )
        budget.count_header(header.size)
        body = stream.read(header.size)
        stream.skip_padding(header.size)
        if header.typeflag == GNU_LONG_NAME:
            self.long_name = body.split(b"\0", 1)[0].decode("latin-1")
        elif header.typeflag == PAX:
            self.records = pax_records(body)
        elif header.typeflag == PAX_GLOBAL:
            pax_records(body)
            self.records, self.long_name = {}, None

    def apply(self, header: Header, within: tuple[str, ...]) -> Header:
        records, long_name = self.records, self.long_name
        self.records, self.long_name = {}, None
        name = records.get("path") or header.name
        if long_name:
            name = long_name
        if header.typeflag == GNU_SPARSE or any(k.startswith("GNU.sparse.") for k in records):
            # What a sparse file holds is not the bytes stored: a schema could hide in the holes.
            raise Unreadable(f"{_where(within)}{shown(name)}: a sparse file, which no chart holds")
        size = None
        if records.get("size"):
            size = decimal(records["size"])
            if size is None:
                raise Unreadable(f"{_where(within)}{shown(name)}: a size that is not a number")
        return finished(header, name, size)


def helm_path(name: str, within: tuple[str, ...] = ()) -> str:
    """The member's name in its chart as Helm's loader makes it: the first path element (the
    chart's directory) dropped, `\\` read as the separator where the name has one, cleaned.
    Unreadable where Helm refuses the name, as it then refuses the archive."""
    delimiter = "\\" if "\\" in name else "/"
    parts = name.split(delimiter)
    path = delimiter.join(parts[1:]).replace(delimiter, "/")
    where = f"{_where(within)}{shown(name)}"
    if path.startswith("/"):
        raise Unreadable(f"{where}: an absolute path")
    path = posixpath.normpath(path) if path else "."
    if path == "." or path.startswith("..") or _DRIVE_RE.match(path):
        raise Unreadable(f"{where}: a path outside the chart's directory")
    if parts[0] == "Chart.yaml":
        raise Unreadable(f"{where}: Chart.yaml outside the chart's directory")
    return path


def _where(within: tuple[str, ...]) -> str:
    """`redis/charts/common-2.0.0.tgz: `, where a message is about a nested archive."""
    return f"{' › '.join(shown(n) for n in within)}: " if within else ""


class _Stream:
    """The gunzipped bytes of one archive, read exactly and counted as they are read."""

    def __init__(self, source: IO[bytes], budget: Budget) -> None:
        self._gzip = gzip.GzipFile(fileobj=source, mode="rb")
        self._budget = budget

    def block(self) -> bytes | None:
        """The next header block, or None at the end of the archive: a zero block (Go's reader
        ends there, or at an error if a second one does not follow), or the end of the stream."""
        block = self._read(BLOCK, at_end=True)
        return None if not block or block == ZERO_BLOCK else block

    def read(self, size: int) -> bytes:
        return self._read(size)

    def skip(self, size: int) -> None:
        """A member's data and the padding after it."""
        self.discard(size)
        self.skip_padding(size)

    def discard(self, size: int) -> None:
        left = size
        while left:
            left -= len(self._read(min(left, _SKIP_CHUNK)))

    def skip_padding(self, size: int) -> None:
        """Go's reader takes an archive that ends inside the padding as ended."""
        if size % BLOCK:
            self._read(BLOCK - size % BLOCK, short=True)

    def _read(self, size: int, at_end: bool = False, short: bool = False) -> bytes:
        """Exactly `size` bytes; none at all at the end where `at_end`, fewer where `short`."""
        self._budget.count_decompressed(size)
        try:
            data = self._gzip.read(size)
        except EOFError:
            raise Unreadable("truncated: the gzip stream ends early") from None
        except (OSError, zlib.error) as exc:
            raise Unreadable(f"not a readable gzip stream ({exc})") from None
        if len(data) != size and not short and not (at_end and not data):
            raise Unreadable("truncated: the archive ends inside a member")
        return data


class _Slice(io.RawIOBase):
    """The next `size` bytes of a stream (a subchart archive's, inside its chart's archive), as
    a file the gzip reader reads from."""

    def __init__(self, stream: _Stream, size: int) -> None:
        self._stream, self.remaining = stream, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self.remaining, _SKIP_CHUNK)
        self.remaining -= size
        data = self._stream.read(size) if size else b""
        buffer[:size] = data
        return size
