"""The model: the values a review is made of and the pure functions that read them: the review's
`Context` and `ChartContext`, `Check` and its `Registry`, `Finding` and the `Report`, the config
file's and ct.yaml's models, parsed manifests and their diffs, what CI declares (`ci/`), and the
bounded YAML reader (`yaml/`). No process, no pool, no adapter: it imports git's values and views
(`bot/git/objects.py`), Kubernetes facts (`bot/kube/`) and the utilities below them
(.importlinter's `model-is-values`). Checks read it; everything above builds on it."""
