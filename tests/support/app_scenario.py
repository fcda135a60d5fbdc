"""The App tests' repository: a chart on develop and PR #1, which turns a pod Burstable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.model.config import CONFIG_PATH
from checks import REGISTRY
from tests.support.charts import CT_LINT_PATH, CT_LINT_WORKFLOW, chart_files
from tests.support.fakegithub import FakeGitHub
from tests.support.gitbuilder import GitBuilder

REPO = "acme/charts"
RUNS = ["chart-review"]  # the default layout: one run, a section per check
# `check_runs: per-check`: a run per check family, the names before the one run was the default.
PER_CHECK_RUNS = [f"chart-review/{c.name}" for c in REGISTRY if not c.quiet]
PER_CHECK_CONFIG = "check_runs: per-check\n"
# The run names every review had before the one run became the default: branch protection may
# require them, so `per-check` keeps each (a check added since gets its own beside them).
NAMES_BEFORE_ONE_RUN = tuple(
    f"chart-review/{name}"
    for name in ("qos", "version", "headings", "uid", "probes", "selectors", "comments")
    + ("duplicates",)
)
INIT = """      initContainers:
        - name: wait-for-mysql
          image: busybox:1.36
"""
TEMPLATE = "client/templates/deployment.yaml"


@dataclass
class Scenario:
    git: GitBuilder
    base: str
    head: str
    clone_url: str


def with_init(template: str) -> str:
    return template.replace("      containers:\n", INIT + "      containers:\n")


def chart_yaml(version: str) -> str:
    return f'apiVersion: v2\nname: client\nversion: {version}\nappVersion: "{version}"\n'


def build_scenario(tmp_path: Path, github: FakeGitHub, config: str | None = None) -> Scenario:
    """develop holds client 1.0.0, linted by ct in CI; PR #1 adds an unresourced init container and bumps to 1.0.1,
    which turns the `equal` profile's Guaranteed pod Burstable. `config`: develop's
    .github/chart-review.yml."""
    git = GitBuilder(tmp_path / "charts").write(CT_LINT_PATH, CT_LINT_WORKFLOW)
    if config is not None:
        git.write(CONFIG_PATH, config)
    files = chart_files("client", "client", "1.0.0")
    for path, text in files.items():
        git.write(path, text)
    base = git.commit("client 1.0.0").sha()
    git.branch("wait-for-mysql")
    git.write(TEMPLATE, with_init(files[TEMPLATE]))
    git.write("client/Chart.yaml", chart_yaml("1.0.1"))
    head = git.commit("Wait for MySQL before starting").sha()
    git.pull_ref(1, "wait-for-mysql").checkout("develop")
    clone_url = str(git.path)
    github.add_repo(REPO, default_branch="develop", clone_url=clone_url, branches={"develop": base})
    github.add_pull(
        REPO, number=1, head_sha=head, base_sha=base, head_ref="wait-for-mysql", base_ref="develop"
    )
    return Scenario(git, base, head, clone_url)
