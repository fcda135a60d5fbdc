"""The review core: one review of a change (`review.py`), its charts checked window by window
(`chart_windows.py`), the fixes it proves (`suggestions.py`) and where a finding belongs
(`provenance.py`, `placing.py`). It runs the checks it is handed (`checks.REGISTRY`, passed in)
over the chart pipeline's renders; it never imports a check, the App, the Action or the command
line, and no rendering of the report (`bot/report/`)."""
