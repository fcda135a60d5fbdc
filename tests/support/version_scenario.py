"""The release-race scenario of issue 4, replayed in a real git repository.

develop starts at client 1.9.58 (released as `client-1.9.58`). PR #101 bumps to 1.9.59, merges and
is released as `client-1.9.59`. Still open:

- #102 `pr-b`: bumped 1.9.58 -> 1.9.59 with a Chart.yaml identical to #101's: merges cleanly
- #103 `pr-c`: branched after #101, claims 1.9.60
- #104 `pr-d`: adds a template, no bump
- #105 `pr-e`: edits only the chart's `ci/` and `tests/` files
- #106 `pr-f`: bumped to 1.9.59 but kept appVersion 1.9.58: Chart.yaml conflicts
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bot.git.repo import GitRepo
from bot.model.config import Config
from bot.model.context import ChartContext, ChartRenders, OpenPR
from bot.model.rivals import comparable_prs
from tests.support.charts import CT_LINT_PATH, CT_LINT_WHERE, CT_LINT_WORKFLOW
from tests.support.gitbuilder import GitBuilder

__all__ = ["CT_LINT_WHERE"]

CHART_YAML = """apiVersion: v2
name: {name}
description: A test chart
type: application
version: {version}
appVersion: "{app}"
"""

DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: client
spec:
  replicas: {{ .Values.replicas }}
"""

SCENARIO_PRS = {102: "pr-b", 103: "pr-c", 104: "pr-d", 105: "pr-e", 106: "pr-f"}


def chart_yaml(version: str, app: str | None = None, name: str = "client") -> str:
    return CHART_YAML.format(name=name, version=version, app=app or version)


def write_chart(g: GitBuilder, path: str, name: str, version: str) -> GitBuilder:
    return (
        g.write(f"{path}/Chart.yaml", chart_yaml(version, name=name))
        .write(f"{path}/templates/deployment.yaml", DEPLOYMENT)
        .write(f"{path}/values.yaml", "replicas: 1\n")
        .write(f"{path}/ci/default-values.yaml", "replicas: 2\n")
        .write(f"{path}/tests/values_test.yaml", "suite: defaults\n")
        .write(f"{path}/README.md", f"# {name}\n")
    )


@dataclass
class Scenario:
    g: GitBuilder
    repo: GitRepo
    base: str  # develop before #101
    prs: dict[int, OpenPR] = field(default_factory=dict)

    @property
    def develop(self) -> str:
        return self.g.sha("develop")

    def open_pr(self, number: int, branch: str) -> OpenPR:
        pr = OpenPR(number=number, head=self.g.sha(branch), ref=branch, base_ref="develop")
        self.prs[number] = pr
        return pr

    def context(
        self, number: int, config: Config | None = None, chart: str = "client"
    ) -> ChartContext:
        """The Context the engine builds to review PR `number` into develop."""
        return context_for(self.repo, self.prs[number], list(self.prs.values()), config, chart)


def context_for(
    repo: GitRepo,
    pr: OpenPR,
    open_prs: list[OpenPR],
    config: Config | None = None,
    chart_path: str = "client",
    develop: str = "develop",
) -> ChartContext:
    target = repo.resolve(develop)
    assert target is not None
    base = repo.merge_base(target, pr.head)
    assert base is not None
    chart = ChartRenders(path=chart_path, name=chart_path.rsplit("/", 1)[-1], base={}, head={})
    return ChartContext(
        config=config or Config(),
        git=repo,
        base=repo.tree(base),
        head=repo.tree(pr.head),
        target=repo.tree(target),
        develop=repo.tree(target),
        changes=repo.changes(base, pr.head),
        charts=(chart,),
        chart=chart,
        # As the engine hands them: the PRs into the same branch, one per head, not this one.
        open_prs=comparable_prs(
            repo, target, develop, pr.head, [o for o in open_prs if o.number != pr.number]
        ),
        target_name=develop,
        develop_name=develop,
    )


def build_scenario(root: Path) -> Scenario:
    g = GitBuilder(root).write(CT_LINT_PATH, CT_LINT_WORKFLOW)
    write_chart(g, "client", "client", "1.9.58").commit("client 1.9.58").tag("client-1.9.58")
    base = g.sha()

    g.branch("pr-a", "develop")
    g.write("client/templates/deployment.yaml", DEPLOYMENT + "  minReadySeconds: 5\n")
    g.write("client/Chart.yaml", chart_yaml("1.9.59")).commit("client: minReadySeconds, 1.9.59")

    g.branch("pr-b", base).write("client/values.yaml", "replicas: 3\n")
    g.write("client/Chart.yaml", chart_yaml("1.9.59")).commit("client: three replicas, 1.9.59")

    g.branch("pr-d", base).write("client/templates/service.yaml", "kind: Service\n")
    g.commit("client: add a Service")

    g.branch("pr-e", base).write("client/ci/default-values.yaml", "replicas: 4\n")
    g.write("client/tests/values_test.yaml", "suite: four\n").commit("client: test four replicas")

    g.branch("pr-f", base).write("client/values.yaml", "replicas: 5\n")
    g.write("client/Chart.yaml", chart_yaml("1.9.59", app="1.9.58")).commit("client: five, 1.9.59")

    g.checkout("develop").merge("pr-a", "Merge pull request #101 from org/pr-a")
    g.tag("client-1.9.59")

    g.branch("pr-c", "develop").write("client/values.yaml", "replicas: 6\n")
    g.write("client/Chart.yaml", chart_yaml("1.9.60")).commit("client: six replicas, 1.9.60")
    g.checkout("develop")

    scenario = Scenario(g, GitRepo(g.path), base)
    for number, branch in SCENARIO_PRS.items():
        scenario.open_pr(number, branch)
    return scenario
