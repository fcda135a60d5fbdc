"""Unified diffs (`git diff --unified=0 -M`) → changed files with their added and removed line numbers."""

from __future__ import annotations

import re

from bot.git.objects import ChangedFile

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _unquote(path: str) -> str:
    if path.startswith('"') and path.endswith('"'):
        return (
            path[1:-1]
            .encode("latin-1", "backslashreplace")
            .decode("unicode_escape")
            .encode("latin-1")
            .decode("utf-8", "replace")
        )
    return path


def _strip(path: str) -> str | None:
    path = _unquote(path)
    if path == "/dev/null":
        return None
    return path[2:] if path[:2] in ("a/", "b/") else path


class _FileBuilder:
    def __init__(self) -> None:
        self.old: str | None = None
        self.new: str | None = None
        self.rename_from: str | None = None
        self.added: set[int] = set()
        self.removed: set[int] = set()
        self.status = "M"

    def build(self) -> ChangedFile | None:
        path = self.new or self.old
        if path is None:
            return None
        status = self.status
        if self.rename_from:
            status = "R"
        elif self.old is None:
            status = "A"
        elif self.new is None:
            status = "D"
        return ChangedFile(
            path=path,
            status=status,
            old_path=self.rename_from if status == "R" else None,
            added_lines=frozenset(self.added),
            removed_lines=frozenset(self.removed),
        )


def parse_unified_diff(text: str) -> tuple[ChangedFile, ...]:
    files: list[ChangedFile] = []
    current: _FileBuilder | None = None

    def flush() -> None:
        if current is not None and (built := current.build()) is not None:
            files.append(built)

    for line in text.splitlines():
        if line.startswith("diff --git "):
            flush()
            current = _FileBuilder()
            a, _, b = line[len("diff --git ") :].partition(" b/")
            current.old, current.new = _strip(a), _strip("b/" + b)
        elif current is None:
            continue
        elif line.startswith("new file mode"):
            current.old = None
        elif line.startswith("deleted file mode"):
            current.new = None
        elif line.startswith("rename from "):
            current.rename_from = _unquote(line[len("rename from ") :])
        elif line.startswith("rename to "):
            current.new = _unquote(line[len("rename to ") :])
        elif line.startswith("--- "):
            current.old = _strip(line[4:])
        elif line.startswith("+++ "):
            current.new = _strip(line[4:])
        elif match := _HUNK_RE.match(line):
            old_start, old_len = int(match[1]), int(match[2] if match[2] is not None else 1)
            new_start, new_len = int(match[3]), int(match[4] if match[4] is not None else 1)
            current.removed.update(range(old_start, old_start + old_len))
            current.added.update(range(new_start, new_start + new_len))
    flush()
    return tuple(files)
