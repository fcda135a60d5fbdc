"""What the review will read of one chart archive, and of one chart's archives together: every
number the bounded reader (bot/tarball/reader.py) stops at, in one place.

Each sits at or above what Helm's own loader accepts, so a chart Helm loads is never refused for
size; where Helm has no limit, the number is far above what any chart archive holds. The facts they
are measured against (Helm v4.2.3, the one helm-python-sdk embeds; Go's archive/tar beneath it):

- Helm reads an archive's files up to 100 MiB together (`MaxDecompressedChartSize`), each up to
  5 MiB (`MaxDecompressedFileSize`), counting file contents only: headers, and members of no
  size, cost nothing there, so Helm has no limit on how many members an archive holds.
- A subchart archive inside an archive (`charts/redis-17.3.0.tgz`) is read again with a fresh
  100 MiB, at any depth: Helm bounds no total across them.
- Go's tar reader refuses an extended header (PAX records, a GNU long name) over 1 MiB.

The corpus (the 3,680 chart archives at the tips of the mirrored repositories' refs,
`bench/archive_bench.py --case corpus`) holds at most 259 members, 130 KiB of headers and 6.5 MiB
unpacked in one archive, nested 2 deep: none is refused for a cap.
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class ArchiveLimits:
    # Entries of any kind (files, directories, extended headers), nested archives' included.
    # Helm has none; 20,000 is 77x the corpus's largest archive and 4x the 5,000-template chart
    # the tests render, and reading that many headers costs well under a second.
    members: int = 20_000
    # Header blocks and extended-header records: 20,000 plain headers are 10 MiB.
    header_bytes: int = 32 * MIB
    # One extended header (PAX records, GNU long name): Go's reader refuses more.
    special_bytes: int = 1 * MIB
    # One archive's files together: Helm's MaxDecompressedChartSize.
    file_bytes: int = 100 * MIB
    # Everything gunzipped (headers, files, padding), nested archives' included: above one
    # archive at every other cap (100 + 32 MiB, and 10 MiB of padding).
    decompressed_bytes: int = 256 * MIB
    # Archives inside archives: `helm package` nests one level per dependency level.
    depth: int = 8
    # The most of one member's content the reader hands a caller: Helm's MaxDecompressedFileSize
    # (a larger file is one Helm refuses to load).
    held_bytes: int = 5 * MIB


LIMITS = ArchiveLimits()


def mib(size: int) -> str:
    """`100 MiB`, `1 MiB`: how a cap is said in a refusal."""
    return f"{size / MIB:g} MiB"
