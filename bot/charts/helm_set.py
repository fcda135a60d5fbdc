"""Helm's `--values FILE`, `--set` and `--set-string` as helm reads them, for the command line's
arguments and the Action's inputs alike: the files loaded from the user's machine, each `--set`
parsed by the rules of Helm's strvals (`a.b=c`, `a[0]=x`, `k1=v1,k2=v2`, `\\,` for a literal comma,
`a={x,y}` for a list; `true`/`false`/`null` and integers typed, anything else a string). What
cannot be parsed is a usage error naming the argument: exit 2."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bot.charts.profiles import (
    MAX_SET_INDEX,
    Assignment,
    ValuesOverride,
    check_values_size,
    load_values,
)
from bot.errors import UsageError

KEY_STOPS = frozenset("=[,.")
AFTER_INDEX_STOPS = frozenset("[.=")
# strvals' `MaxNestedNameLevel`: `a.b.c...` at most this deep.
MAX_NESTING = 30
# Go's strconv.Atoi / ParseInt(base 10) syntax; Python's int() would also take "1_000" and " 1".
INTEGER = re.compile(r"[+-]?[0-9]+")
INT64 = range(-(2**63), 2**63)


def values_override(
    files: Sequence[str], sets: Sequence[str], set_strings: Sequence[str] = ()
) -> ValuesOverride:
    """Helm's order: every `-f` file in turn, then every `--set`, then every `--set-string`."""
    return ValuesOverride(
        files=tuple(read_values_file(f) for f in files),
        sets=(
            *(a for s in sets for a in parse_set(s)),
            *(a for s in set_strings for a in parse_set(s, as_string=True)),
        ),
    )


def read_values_file(path: str) -> dict[str, Any]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"--values {path}: {exc.strerror}") from None
    check_values_size(len(data), path)  # RenderFailure names the file: exit 2 as well
    return load_values(data.decode("utf-8", errors="replace"), path)


def parse_set(text: str, as_string: bool = False) -> tuple[Assignment, ...]:
    option = "--set-string" if as_string else "--set"
    try:
        return _SetParser(text, as_string).parse()
    except _SetSyntax as exc:
        raise UsageError(f"{option} '{text}': {exc}") from None


class _SetSyntax(Exception):
    """Helm's parser would refuse the text; said with the argument by parse_set."""


class _SetParser:
    """A reader of one `--set` argument, in the shape of strvals' parser (key, list item, value) so
    that its rules can be checked against Helm's one by one."""

    def __init__(self, text: str, as_string: bool) -> None:
        self.text, self.pos, self.as_string = text, 0, as_string
        self.found: list[Assignment] = []

    def parse(self) -> tuple[Assignment, ...]:
        while self._key((), 0):
            pass
        return tuple(self.found)

    def _until(self, stops: frozenset[str]) -> tuple[str, str | None]:
        """The text up to a stop character (consumed, returned; None at the end); a backslash makes
        the next character literal."""
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in stops:
                return "".join(out), char
            if char == "\\":
                if self.pos == len(self.text):
                    break
                char = self.text[self.pos]
                self.pos += 1
            out.append(char)
        return "".join(out), None

    def _key(self, path: tuple[str | int, ...], depth: int) -> bool:
        """One `KEY=VAL` (False at the end of the text)."""
        key, stop = self._until(KEY_STOPS)
        if stop is None:
            if not key and not path:
                return False
            raise _SetSyntax(f'key "{key}" has no value')
        if stop == ",":
            raise _SetSyntax(f'key "{key}" has no value (cannot end with ,)')
        if stop == "=":
            self._value((*path, key))
        elif stop == "[":
            self._list_item((*path, key), self._index(), depth)
        else:
            if depth + 1 > MAX_NESTING:
                raise _SetSyntax(f"a key may be nested at most {MAX_NESTING} levels deep")
            self._key((*path, key), depth + 1)
        return True

    def _index(self) -> int:
        text, stop = self._until(frozenset("]"))
        if stop is None:
            raise _SetSyntax("a list index has no closing ]")
        if not INTEGER.fullmatch(text):
            raise _SetSyntax(f'list index "{text}" is not a number')
        index = int(text)
        if index < 0:
            raise _SetSyntax(f"negative list index {index}")
        if index > MAX_SET_INDEX:
            raise _SetSyntax(f"list index {index} is over Helm's maximum of {MAX_SET_INDEX}")
        return index

    def _list_item(self, path: tuple[str | int, ...], index: int, depth: int) -> None:
        rest, stop = self._until(AFTER_INDEX_STOPS)
        if rest:
            raise _SetSyntax(f'unexpected "{rest}" after a list index')
        if stop is None:
            raise _SetSyntax(f'key "{path[-1]}[{index}]" has no value')
        if stop == "=":
            self._value((*path, index))
        elif stop == "[":
            self._list_item((*path, index), self._index(), depth)
        else:
            self._key((*path, index), depth)

    def _value(self, path: tuple[str | int, ...]) -> None:
        if self.text.startswith("{", self.pos):
            self.pos += 1
            value: Any = self._list_value()
        else:
            value = typed(self._until(frozenset(","))[0], self.as_string)
        self._found(path, value)

    def _list_value(self) -> list[Any]:
        items = []
        while True:
            text, stop = self._until(frozenset(",}"))
            if stop is None:
                raise _SetSyntax("a list value must end with }")
            items.append(typed(text, self.as_string))
            if stop == "}":
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                return items

    def _found(self, path: tuple[str | int, ...], value: Any) -> None:
        """strvals sets no empty key: one leading the path drops the assignment, one after a dot
        leaves the map above it empty, which Helm refuses."""
        if "" not in path:
            self.found.append(Assignment(path, value, self.text))
            return
        at = path.index("")
        if at > 0:
            above = path[at - 1]
            raise _SetSyntax(
                f'key map "{above}" has no value'
                if isinstance(above, str)
                else f"list item [{above}] has an empty key"
            )


def typed(text: str, as_string: bool = False) -> Any:
    """strvals' typedVal: `true`/`false`/`null` in any case, `0` and integers not starting with 0
    as numbers (Helm types no floats: `1.5` stays a string), the rest strings."""
    if as_string:
        return text
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered == "null":
        return None
    if text == "0":
        return 0
    if text and text[0] != "0" and INTEGER.fullmatch(text) and int(text) in INT64:
        return int(text)
    return text
