"""chart-review-bot: the review engine and its adapters."""
