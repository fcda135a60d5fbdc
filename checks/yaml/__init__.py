"""The `yaml` check: chart-testing's yamllint and Chart.yaml schema validation (`ct lint`), with
the repository's own ct settings (check.py)."""
