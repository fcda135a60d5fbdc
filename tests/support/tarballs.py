"""Chart archives for the tests of the bounded reader, and for its benchmark: ordinary ones as
`helm package` writes them, hostile ones (two million empty members, nested archives, names Go and
Python read differently), built in memory, never committed."""

from __future__ import annotations

import io
import tarfile
import zlib
from collections.abc import Mapping

BLOCK = 512
CHART_YAML = "apiVersion: v2\nname: {name}\nversion: {version}\n"
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-NAME\n"


def tgz(
    files: Mapping[str, str | bytes],
    format: int = tarfile.USTAR_FORMAT,
    pax_headers: Mapping[str, str] | None = None,
) -> bytes:
    """A gzipped tar of `files` (archive path → content), as Python's tarfile writes it."""
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w:gz", format=format, pax_headers=dict(pax_headers or {})
    ) as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def subchart(name: str, version: str = "1.0.0", extra: Mapping[str, str | bytes] = {}) -> bytes:
    """A small packaged chart `NAME-VERSION.tgz`: Chart.yaml, a ConfigMap, and `extra` files."""
    return tgz(
        {
            f"{name}/Chart.yaml": CHART_YAML.format(name=name, version=version),
            f"{name}/templates/configmap.yaml": configmap(name),
            **{f"{name}/{path}": text for path, text in extra.items()},
        }
    )


def configmap(name: str) -> str:
    return CONFIGMAP.replace("NAME", name)


def empty_members(count: int, name: str = "redis/templates/empty.yaml", level: int = 9) -> bytes:
    """`count` members of no size under one name, gzipped as a stream: identical headers compress
    ~230:1, so two million of them are a 4.4 MB file that unpacks to a gigabyte of headers."""
    info = tarfile.TarInfo(name)
    header = info.tobuf(tarfile.USTAR_FORMAT)
    squeeze = zlib.compressobj(level, zlib.DEFLATED, 31)
    chunk, left, parts = 4096, count, []
    while left:
        take = min(chunk, left)
        parts.append(squeeze.compress(header * take))
        left -= take
    parts.append(squeeze.compress(bytes(2 * BLOCK)))
    parts.append(squeeze.flush())
    return b"".join(parts)


def header(name: str, size: int, typeflag: bytes = b"0", magic: bytes = b"ustar\x0000") -> bytes:
    """One raw header block, for the shapes tarfile will not write."""
    fields = b"".join(
        (
            name.encode("latin-1").ljust(100, b"\0"),
            b"0000644\0",
            b"0000000\0" * 2,
            b"%011o\0" % size,
            b"00000000000\0",
            b" " * 8,  # the checksum, counted as spaces
            typeflag,
            bytes(100),
            magic,
        )
    ).ljust(BLOCK, b"\0")
    checksum = b"%06o\0 " % sum(fields)
    return fields[:148] + checksum + fields[156:]


def raw_tgz(*members: tuple[bytes, bytes]) -> bytes:
    """A gzipped tar of raw (header block, data) pairs, each padded to its block, then the end."""
    body = b"".join(h + d + bytes(-len(d) % BLOCK) for h, d in members)
    return _gzip(body + bytes(2 * BLOCK))


def _gzip(data: bytes) -> bytes:
    squeeze = zlib.compressobj(6, zlib.DEFLATED, 31)
    return squeeze.compress(data) + squeeze.flush()
