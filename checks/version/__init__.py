"""The `version` check (checks/version/check.py); `CHECK` and `run` are what the registry and the
release board's tests name."""

from checks.version.check import CHECK, run

__all__ = ["CHECK", "run"]
