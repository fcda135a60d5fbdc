"""The `kube` check: rendered objects against the Kubernetes API of the target version, custom
resources against the chart's CRDs, and deprecated or removed apiVersions (check.py)."""
