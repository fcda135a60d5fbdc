"""The render process confines itself first thing, before Helm's Go runtime starts its threads (a
Landlock domain applies to the thread that enters it and the threads it starts afterwards only).

Defence in depth behind the checks made before a chart reaches the sandbox (a schema's `$ref`, a
symlink): whatever Helm or a template might still try, the kernel refuses it.
- Landlock: from here on the process may only read (and map) the interpreter's and the bot's own
  files, which lazy imports need, and use one scratch directory of its own (Helm's lint takes a
  file path: the archive is written there, extracted by Helm, removed); nothing else on the file
  system, and it can write nowhere else. The pipes to the parent were opened before, so they keep
  working.
- seccomp: `socket`, `connect` and `io_uring_setup` (whose rings could do the same without a
  syscall to filter) fail with EACCES, so no connection can be opened.
Both need no privilege: `no_new_privs` is set first. A kernel or libc without one of them leaves
the process partly confined; the parent says so once in its log (bot/render/sandbox.py).
"""

from __future__ import annotations

import errno
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DENIED_SYSCALLS = ("socket", "connect", "io_uring_setup")


@dataclass(frozen=True)
class Confinement:
    landlock: bool
    seccomp: bool
    missing: tuple[str, ...] = ()  # why a part could not be applied

    def to_json(self) -> dict[str, object]:
        return {"landlock": self.landlock, "seccomp": self.seccomp, "missing": list(self.missing)}


def readable_roots() -> tuple[str, ...]:
    """What the render process still reads after confinement: Python's own tree (stdlib, its
    extension modules), the installed packages (helm-python-sdk, PyYAML) and the bot's code."""
    paths = sysconfig.get_paths()
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        paths["stdlib"],
        paths["platstdlib"],
        paths["purelib"],
        paths["platlib"],
        str(Path(__file__).resolve().parents[1]),  # the bot package
    }
    return tuple(sorted(r for r in roots if Path(r).exists()))


def confine(writable: str | None = None) -> Confinement:
    """`writable`: the one directory the process may also write, create and remove files in."""
    missing: list[str] = []
    # seccomp first: loading libseccomp looks the library up on the file system.
    seccomp = _seccomp(missing)
    landlock = _landlock(readable_roots(), missing, writable)
    return Confinement(landlock, seccomp, tuple(missing))


def _landlock(roots: tuple[str, ...], missing: list[str], writable: str | None = None) -> bool:
    try:
        import landlock
    except ImportError:
        missing.append("landlock: the landlock package is not installed")
        return False
    try:
        ruleset = landlock.Ruleset()  # handles every file-system right: all denied unless allowed
        read = landlock.FSAccess.READ_FILE | landlock.FSAccess.READ_DIR | landlock.FSAccess.EXECUTE
        ruleset.allow(*roots, rules=read)
        if writable is not None:
            ruleset.allow(writable, rules=_scratch_rights(landlock.FSAccess, ruleset))
        ruleset.apply()  # sets no_new_privs first
    except (OSError, landlock.LandlockError) as exc:
        missing.append(f"landlock: {exc}".splitlines()[0])
        return False
    return True


def _scratch_rights(access: Any, ruleset: Any) -> Any:
    """Plain files and directories only: nothing in the scratch directory can be executed, linked
    or made a device. Truncating is a right of its own on newer kernels (Go creates files with
    O_TRUNC); it is asked for only where the kernel handles it."""
    rights = access.READ_FILE | access.READ_DIR | access.WRITE_FILE | access.TRUNCATE
    rights |= access.MAKE_REG | access.MAKE_DIR | access.REMOVE_FILE | access.REMOVE_DIR
    return rights & ruleset.restrict_rules


def _seccomp(missing: list[str]) -> bool:
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 is not on the system
        missing.append(f"seccomp: {exc}")
        return False
    try:
        allow_the_rest = seccomp.SyscallFilter(seccomp.ALLOW)
        # Every thread of the process, not only this one (the filter is applied before Helm's Go
        # runtime starts its threads, but a thread started earlier must not stay unfiltered).
        allow_the_rest.set_attr(seccomp.Attr.CTL_TSYNC, 1)
        for name in DENIED_SYSCALLS:
            allow_the_rest.add_rule(seccomp.ERRNO(errno.EACCES), name)
        allow_the_rest.load()  # sets no_new_privs unless told otherwise
    except OSError as exc:
        missing.append(f"seccomp: {exc}")
        return False
    return True
