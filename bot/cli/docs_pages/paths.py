"""Where the generated pages and their sources are: the repository's root, from this package."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
