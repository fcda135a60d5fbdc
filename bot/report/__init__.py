"""Every rendering of a report: markdown (`markdown.py`, `diff_section.py`), SARIF (`sarif.py`),
workflow annotations (`annotations.py`), the check-run and comment bodies within GitHub's named
limits (`bodies.py`, `one_run.py`, `run_layout.py`, `comment.py`, `inline.py`), and the JSON
report's schema (`schema/report-1.json`, what `Report.to_json` writes, `"schema": 1`, read through
`schema.py`). Pure functions of a `Report`: they import the model and Kubernetes facts only
(.importlinter's `report-renders-values`); the App and the Action send what they make."""
