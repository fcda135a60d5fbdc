"""Where the Action keeps its install, and the key it is cached by: run by action.yml's first step
as `python3 bot/action/install.py`, before the package is installed, so the standard library
only.

The install is a virtual environment keyed by what the action's ref names (a digest of the files
pip builds the package from, so a tag and the commit it points to share one install, and a moved
tag does not reuse a stale one; `github.action_ref` itself is not reliable inside a composite
action) and by the Python that runs it (its version and where it lives: a venv points at its
interpreter), on this runner's system and machine. The venv lives under the runner's tool cache,
which a self-hosted runner keeps between jobs; `actions/cache` keeps it on hosted runners.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

# The files `pip install` builds the package from: a change to any of them is a new install.
SOURCES = ("pyproject.toml", "bot", "checks", "webhooks")
SKIPPED = ("__pycache__",)
KEY_PREFIX = "chart-review-venv-v1"  # raised when the install's layout changes
DIGEST_CHARS = 16
INSTALL_DIR = "chart-review"  # under the tool cache


def source_files(root: Path) -> Iterator[Path]:
    for name in SOURCES:
        top = root / name
        if top.is_file():
            yield top
        elif top.is_dir():
            for path in sorted(top.rglob("*")):
                if path.is_file() and not set(path.parts) & set(SKIPPED) and path.suffix != ".pyc":
                    yield path


def source_digest(root: Path) -> str:
    """Every source file's path and bytes, in one order."""
    digest = hashlib.sha256()
    for path in source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:DIGEST_CHARS]


def python_tag() -> str:
    """`cpython3.12.7-<where>`: a venv works only with the very interpreter it was made with."""
    where = hashlib.sha256(os.path.realpath(sys.base_prefix).encode()).hexdigest()[:8]
    version = ".".join(str(n) for n in sys.version_info[:3])
    return f"{sys.implementation.name}{version}-{where}"


def install_key(root: Path) -> str:
    system = f"{platform.system()}-{platform.machine()}".lower()
    return f"{KEY_PREFIX}-{system}-{python_tag()}-{source_digest(root)}"


def install_dir(environ: Mapping[str, str], key: str) -> Path:
    """In the tool cache (`RUNNER_TOOL_CACHE`), else the job's temporary directory."""
    base = environ.get("RUNNER_TOOL_CACHE") or environ.get("RUNNER_TEMP") or "/tmp"
    return Path(base) / INSTALL_DIR / key


def main(environ: Mapping[str, str] = os.environ) -> int:
    """`key=` and `venv=` lines, for the step's GITHUB_OUTPUT."""
    root = Path(environ.get("ACTION_PATH") or Path(__file__).resolve().parents[2])
    key = install_key(root)
    sys.stdout.write(f"key={key}\nvenv={install_dir(environ, key)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
