"""The GitHub Action: what a runner hands a step (the event, GITHUB_* and the action's INPUT_*,
`env.py`), the job's checkout (`checkout.py`), the workflow's token (`api.py`), the review of the
event's PR published through the App's public parts (`review.py`: check runs, the summary comment,
inline comments), and what the step leaves (`output.py`: the report files, outputs, annotations,
the job summary). `run.py` is `chart-review action`; `install.py`, run by action.yml before the
package is installed, the standard library alone. It imports the App's public modules and every
layer below, never the command line."""
