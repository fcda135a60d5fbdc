"""One tar header block read as Go's archive/tar reads it (Helm's loader is built on it): the
member's type, name and size, and the PAX records of an extended header.

Where Go's reader takes a header, the name and size here are the ones it takes: a member found at
another offset, or under another name, would let a file Helm loads go uninspected. Where Go's
reader refuses a header, so does this one (`Unreadable`): Helm could not load that archive either.
Names are kept as bytes decoded one to one (latin-1), as Go keeps them: no byte becomes a `/` or a
`\\` that Helm's path rules would split on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.errors import ChartReviewError

BLOCK = 512
ZERO_BLOCK = bytes(BLOCK)

# Type flags. Header-only types carry no data whatever their size field says.
REGULAR, REGULAR_OLD, DIRECTORY = "0", "\0", "5"
HEADER_ONLY = frozenset("123456")
PAX, PAX_GLOBAL, GNU_LONG_NAME, GNU_LONG_LINK, GNU_SPARSE = "x", "g", "L", "K", "S"
SPECIAL = frozenset((PAX, PAX_GLOBAL, GNU_LONG_NAME, GNU_LONG_LINK))
_DIRECTORY_MODE = 0o40000
_USTAR_MAGIC, _GNU_MAGIC, _GNU_VERSION, _STAR_TRAILER = b"ustar\0", b"ustar ", b" \0", b"tar\0"
_OCTAL = frozenset(b"01234567")
_DECIMAL_RE = re.compile(r"[+-]?[0-9]{1,19}\Z")


class ArchiveRefused(ChartReviewError):
    """An archive the review does not hand to Helm: past one of its caps, or unreadable."""


class Unreadable(ArchiveRefused):
    """Not a tar archive Go's reader, and so Helm, can read."""


@dataclass(frozen=True)
class Header:
    typeflag: str
    name: str
    size: int  # of the data that follows in the stream (0 for header-only types)
    directory: bool  # Helm skips it, as a directory, whatever its data


def parse_header(block: bytes) -> Header:
    """The header in a 512-byte block that is not all zeros."""
    magic, version = block[257:263], block[263:265]
    _check_sum(block)
    typeflag = chr(block[156])
    name = _string(block[0:100])
    prefix = ""
    if magic == _USTAR_MAGIC:
        star = block[508:512] == _STAR_TRAILER
        prefix = _string(block[345:476] if star else block[345:500])
    elif magic == _GNU_MAGIC and version == _GNU_VERSION:
        prefix = _buggy_gnu_prefix(block)
    if prefix:
        name = f"{prefix}/{name}"
    size = numeric(block[124:136])
    mode = numeric(block[100:108])
    if size < 0:
        raise Unreadable(f"{name}: a negative size")
    # Go reads the mode as a 32-bit os.FileMode, its file type above the permission bits.
    directory = typeflag == DIRECTORY or mode & 0xFFFF_FFFF & ~0o7777 == _DIRECTORY_MODE
    return Header(typeflag, name, 0 if typeflag in HEADER_ONLY else size, directory)


def finished(header: Header, name: str, size: int | None) -> Header:
    """The member a header describes once the extended headers before it apply: their name (and
    size, PAX records only), and the old rule that a plain-type name ending in `/` is a
    directory, with no data."""
    typeflag = header.typeflag
    if typeflag == REGULAR_OLD:
        typeflag = DIRECTORY if name.endswith("/") else REGULAR
    data = header.size if size is None else size
    if typeflag in HEADER_ONLY:
        data = 0
    if data < 0:
        raise Unreadable(f"{name}: a negative size")
    directory = header.directory or typeflag == DIRECTORY
    return Header(typeflag, name, data, directory)


def _check_sum(block: bytes) -> None:
    """Go's reader takes a header whose checksum matches its bytes summed unsigned or signed,
    the checksum field counted as spaces."""
    stored = _octal(block[148:156])
    unsigned = sum(block) - sum(block[148:156]) + 8 * ord(" ")
    if stored == unsigned:
        return
    signed = unsigned - 256 * sum(1 for b in block[:148] + block[156:] if b >= 0x80)
    if stored != signed:
        raise Unreadable("a header whose checksum does not match")


def _buggy_gnu_prefix(block: bytes) -> str:
    """A GNU header has no name prefix, unless its access and change times do not parse: then Go
    reads them as the prefix an old Go writer wrongly put there (golang.org/issue/12594)."""
    try:
        for field in (block[345:357], block[357:369]):
            if field[0] != 0:
                numeric(field)
    except Unreadable:
        prefix = _string(block[345:500])
        return prefix if prefix.isascii() else ""
    return ""


def numeric(field: bytes) -> int:
    """A numeric field: base-256 when its first bit is set (negative when its second is), else
    octal padded with spaces and NULs."""
    if field and field[0] & 0x80:
        invert = 0xFF if field[0] & 0x40 else 0
        magnitude = bytes(b ^ invert for b in field)
        value = int.from_bytes(bytes([magnitude[0] & 0x7F]) + magnitude[1:], "big")
        if value >= 1 << 63:
            raise Unreadable("a header field past 64 bits")
        return ~value if invert else value
    return _octal(field)


def _octal(field: bytes) -> int:
    digits = field.strip(b" \0").split(b"\0", 1)[0]
    if not digits:
        return 0
    if not set(digits) <= _OCTAL:
        raise Unreadable("a header field that is not a number")
    value = int(digits, 8)
    if value >= 1 << 64:
        raise Unreadable("a header field past 64 bits")
    return value - (1 << 64) if value >= 1 << 63 else value  # as Go's int64 of a uint64


def _string(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("latin-1")


def pax_records(data: bytes) -> dict[str, str]:
    """An extended header's records, `LENGTH KEY=VALUE\\n` each; a later key wins."""
    records: dict[str, str] = {}
    text = data.decode("latin-1")
    while text:
        length, space, _ = text.partition(" ")
        if not space or decimal(length) is None or not 5 <= int(length) <= len(text):
            raise Unreadable("an extended header whose records do not parse")
        record, text = text[len(length) + 1 : int(length)], text[int(length) :]
        key, equals, value = record.removesuffix("\n").partition("=")
        if not record.endswith("\n") or not equals or not key:
            raise Unreadable("an extended header whose records do not parse")
        records[key] = value
    return records


def decimal(text: str) -> int | None:
    """A PAX number as Go's strconv.ParseInt reads it (an int64), or None."""
    if not _DECIMAL_RE.match(text):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < 1 << 63 else None


def shown(name: str) -> str:
    """A member's name as a message says it (the bytes read back as UTF-8)."""
    return name.encode("latin-1").decode("utf-8", "replace")
