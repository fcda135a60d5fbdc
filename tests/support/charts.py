"""Chart fixtures: small real charts written into a repository under test."""

from __future__ import annotations

CHART_YAML = """apiVersion: v2
name: {name}
version: {version}
appVersion: "{version}"
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ .Release.Name }}}}-{name}
spec:
  selector:
    matchLabels:
      app: {name}
  template:
    metadata:
      labels:
        app: {name}
    spec:
      containers:
        - name: {name}
          image: example/{name}:1
          resources:
            {{{{- toYaml .Values.resources | nindent 12 }}}}
"""

VALUES = """resources:
  requests:
    cpu: 100m
    memory: 64Mi
  limits:
    memory: 64Mi
"""

EQUAL_VALUES = """resources:
  requests:
    cpu: 100m
    memory: 64Mi
  limits:
    cpu: 100m
    memory: 64Mi
"""


def chart_files(path: str = "app", name: str = "app", version: str = "1.0.0") -> dict[str, str]:
    """A chart with one Deployment and two profiles: `burst` (cpu unlimited) and `equal`."""
    return {
        f"{path}/Chart.yaml": CHART_YAML.format(name=name, version=version),
        f"{path}/values.yaml": VALUES,
        f"{path}/templates/deployment.yaml": DEPLOYMENT.format(name=name),
        f"{path}/templates/NOTES.txt": "installed {{ .Release.Name }}\n",
        f"{path}/ci/burst-values.yaml": "{}\n",
        f"{path}/ci/equal-values.yaml": EQUAL_VALUES,
    }


# A chart repository's CI, as most run it: ct lint on every chart (charts at the root here), which
# fails a PR whose chart version does not increase. The version check reads it as the
# repository's declared rule (bot/versions/declared.py).
CT_LINT_WORKFLOW = """name: lint
on: pull_request
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ct lint --target-branch develop --chart-dirs .
"""
CT_LINT_PATH = ".github/workflows/lint.yaml"
CT_LINT_WHERE = f"{CT_LINT_PATH} line 8"
