"""A command run as a person's shell runs it: stdout on a pseudo-terminal of a given size (Python's
`pty`), so that the program itself finds a terminal there, with nothing mocked. stderr goes to a
file, apart, and what the terminal received comes back as it was sent, escapes and all."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Variables that would make rich decide for the terminal rather than find it out.
TERMINAL_OVERRIDES = (
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "COLUMNS",
    "LINES",
)
# A hung child fails the test instead of the suite; the child's own work takes seconds.
HANG_SECONDS = 600
SGR_RE = re.compile(r"\x1b\[[0-9;]*m")
# Any escape sequence: CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`), or ESC and one character.
ESCAPE_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|.)")


@dataclass(frozen=True)
class TerminalRun:
    returncode: int
    screen: str  # what stdout's terminal received, `\r\n` read back as `\n`
    stderr: str

    @property
    def text(self) -> str:
        """The screen without its escape sequences: what a person reads."""
        return ESCAPE_RE.sub("", self.screen)

    def lines(self) -> list[str]:
        return self.text.splitlines()


def cli(*args: str) -> list[str]:
    """`chart-review ARGS` as the console script runs it, in this interpreter."""
    return [sys.executable, "-m", "bot.cli", *args]


def run_on_terminal(
    argv: Sequence[str],
    columns: int = 100,
    rows: int = 40,
    env: Mapping[str, str] | None = None,
) -> TerminalRun:
    base = {k: v for k, v in os.environ.items() if k not in TERMINAL_OVERRIDES}
    base["TERM"] = "xterm-256color"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    with tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=slave,
                stderr=err,
                env={**base, **(env or {})},
                start_new_session=True,
            )
        finally:
            os.close(slave)
        screen = _read_all(master, proc)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    return TerminalRun(proc.returncode, screen.replace("\r\n", "\n"), stderr)


def _read_all(master: int, proc: subprocess.Popen[bytes]) -> str:
    """Everything the terminal receives until the child closes it (Linux then reads EIO)."""
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], HANG_SECONDS)
            if not ready:
                proc.kill()
                raise AssertionError(f"{proc.args} printed nothing for {HANG_SECONDS} s")
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        proc.wait()
    return b"".join(chunks).decode(errors="replace")
