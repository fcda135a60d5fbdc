"""chart-review-bot: the review engine and its adapters."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chart-review-bot")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
