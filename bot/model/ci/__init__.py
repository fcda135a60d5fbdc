"""What a repository's CI runs, read from its files at a commit, never run: the workflows' steps
(`workflows.py`), the shell commands in them and in the Makefile targets and scripts they call
(`shell.py`, `sources.py`), and among those the chart-testing runs (`ct_runs.py`) and the release
tooling (`tooling.py`). The version check reads the repository's declared policy from them, and
ct.yaml's discovery the config file that CI passes to `ct`."""
