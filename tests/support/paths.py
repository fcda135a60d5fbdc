"""Where the suite's data and the project's other folders are, from any test module."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
WEBHOOKS = FIXTURES / "github" / "webhooks"
