"""The GitHub App's HTTP side."""
