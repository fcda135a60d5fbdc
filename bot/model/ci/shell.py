"""Shell text as the commands it runs: one `Command` per simple command, its words unquoted and its
variables expanded where their values are known.

Only what a CI file states is read: a word that a variable, `$(...)` or a GitHub expression would
fill in at run time and whose value is not written down holds `UNKNOWN`, so a caller can tell
"not given" from "given, but not knowable here". The scan is linear in the text (`shlex`, and one
pass per word for `$NAME`), whatever the text holds."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

# Stands for text only the running shell or GitHub would know (a NUL never occurs in a file read).
UNKNOWN = "\x00"
# The words that end one command and start another. `(` `)` also end `$(...)`'s command.
OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "!", "{", "}"})
ASSIGNMENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# `$NAME`, `${NAME}`, `${NAME:-default}` / `${NAME-default}`: the forms CI scripts use for flags.
VARIABLE_RE = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)
# Shell keywords that come before a command on its line (`if ct lint ...; then`).
KEYWORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "time", "exec"})


@dataclass(frozen=True)
class Command:
    """One simple command: `words` after the assignments that prefix it, which are in `env`."""

    words: tuple[str, ...]
    line: int  # 1-based, where its logical line starts in the text
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The program's base name (`/usr/local/bin/ct` is `ct`)."""
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, text) per logical line: a line ending in `\\` goes on with the next."""
    start, parts = 0, list[str]()
    for number, line in enumerate(text.split("\n"), start=1):
        if not parts:
            start = number
        stripped = line.rstrip("\r")
        if stripped.endswith("\\"):
            parts.append(stripped[:-1])
            continue
        parts.append(stripped)
        yield start, " ".join(parts)
        parts = []
    if parts:
        yield start, " ".join(parts)


def commands(text: str, env: Mapping[str, str] | None = None) -> Iterator[Command]:
    """Every simple command of `text`, with `env` (and the assignments before it) expanded in its
    words. `NAME=value` on a line of its own sets NAME for the commands after it."""
    known = dict(env or {})
    for number, line in logical_lines(text):
        for words in _split(_words(line)):
            assigned, rest = _assignments(words, known)
            if not rest:
                known.update(assigned)
                continue
            scoped = {**known, **assigned}
            yield Command(tuple(expand(w, scoped) for w in rest), number, scoped)


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote (a string going on past the line): words as written
        return line.split()


def _split(words: list[str]) -> Iterator[list[str]]:
    current: list[str] = []
    for word in words:
        if word in OPERATORS or set(word) <= set(";&|()"):
            if current:
                yield current
            current = []
            continue
        word = word.strip("`")
        if word.endswith("$"):  # `x=$(cmd)`: the `$` before `(`; the command follows
            word = word[:-1] + UNKNOWN
        if not current and word in KEYWORDS:
            continue
        if word:
            current.append(word)
    if current:
        yield current


def _assignments(words: list[str], env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    assigned: dict[str, str] = {}
    for i, word in enumerate(words):
        match = ASSIGNMENT_RE.match(word)
        if match is None:
            return assigned, words[i:]
        name = word[: match.end() - 1]
        assigned[name] = expand(word[match.end() :], {**env, **assigned})
    return assigned, []


def expand(word: str, env: Mapping[str, str]) -> str:
    """`word` with its variables replaced by their values; one whose value is not known, by
    UNKNOWN."""
    if "$" not in word:
        return word

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        if name in env:
            return env[name]
        default = match.group(2)
        return default if default is not None and UNKNOWN not in default else UNKNOWN

    # What is left (`$1`, `${#x}`, `$@`) is the shell's to fill in.
    return VARIABLE_RE.sub(value, word).replace("$", UNKNOWN)
