"""chart-review-bot: the review engine and its adapters."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # Read from the installed metadata only when asked (`--version`, the App's user agent):
    # importlib.metadata costs every process that imports the package, render processes included,
    # a tenth of what a review's imports cost.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chart-review-bot")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
