"""`--cache-dir`: the on-disk render cache a command keeps between runs."""

from __future__ import annotations

import os
from pathlib import Path

from bot.errors import UsageError
from bot.render.cache import RenderCache


def open_cache(directory: str) -> RenderCache:
    """The render cache in `directory`, which must be a directory this process can write."""
    path = Path(directory)
    if path.exists() and not path.is_dir():
        raise UsageError(f"--cache-dir {directory}: not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--cache-dir {directory}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"--cache-dir {directory}: not writable")
    return RenderCache(path)
