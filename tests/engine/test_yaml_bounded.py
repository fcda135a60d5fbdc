"""YAML aliases cannot exhaust the reviewing process: bot/engine/yaml/bounded.py, and the review
of a chart whose values file or rendered ResourceQuota is an alias bomb."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest
import yaml

from bot.engine.review import Engine, ReviewInput
from bot.engine.yaml.blocks import load_mappings
from bot.engine.yaml.bounded import EXPANSION_LIMIT, AliasBudgetError, load, load_all
from bot.git.repo import GitRepo
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder


def laughs(levels: int = 9, key: str = "l") -> str:
    """The classic: each level names the previous one nine times (9**levels leaves)."""
    lines = [f"{key}0: &{key}0 [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*{key}{i - 1}"] * 9)
        lines.append(f"{key}{i}: &{key}{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_at_once_naming_the_line() -> None:
    text = laughs()
    assert len(text) < 600
    started = time.process_time()  # CPU time: what the bomb costs, whatever else the machine runs
    with pytest.raises(AliasBudgetError) as refused:
        load(text)
    assert time.process_time() - started < 0.1
    assert refused.value.problem_mark is not None and refused.value.problem_mark.line == 6
    assert f"more than {EXPANSION_LIMIT:,} nodes" in refused.value.problem


def test_a_document_that_contains_itself_is_refused() -> None:
    with pytest.raises(AliasBudgetError, match="contain itself"):
        load("a: &a\n  b: *a\n")


def test_anchors_real_files_use_parse_as_the_loader_parses_them() -> None:
    text = (
        "defaults: &defaults\n  cpu: 100m\n  memory: 64Mi\n"
        "web:\n  <<: *defaults\n  memory: 128Mi\nworker: *defaults\nlist: [*defaults, *defaults]\n"
    )
    assert load(text) == yaml.safe_load(text)
    assert load_all(text + "---\nx: 1\n") == list(yaml.safe_load_all(text + "---\nx: 1\n"))
    assert load_mappings(text) == (yaml.safe_load(text),)


def test_a_wide_but_shallow_alias_use_within_the_budget_parses() -> None:
    # 5,000 references to one 100-character string weigh ~505,000: under the budget.
    text = "s: &s " + "x" * 100 + "\nl:\n" + "".join("  - *s\n" for _ in range(5000))
    assert len(load(text)["l"]) == 5000


def bomb_repo(tmp_path: Path, path: str, text: str) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for name, body in chart_files().items():
        g.write(name, body)
    g.commit("app 1.0.0").branch("pr").write(path, text).commit("bomb")
    return g


def review_within_a_second(g: GitBuilder) -> list[tuple[str, str | None, str]]:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()  # CPU time, renders included: the review's own cost
    report = engine.review(ReviewInput(base="develop", head="pr")).report
    assert time.process_time() - started < 1.0
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024  # the bomb never expanded
    found = report.findings_for("render")
    return [(f.rule, f.path, f.message) for f in found if f.rule != "not-reviewed"]


def test_a_values_file_bomb_is_a_finding_naming_the_file(tmp_path: Path) -> None:
    g = bomb_repo(tmp_path, "app/ci/equal-values.yaml", laughs())
    ((rule, path, message),) = review_within_a_second(g)
    assert (rule, path) == ("head-fails", "app/ci/equal-values.yaml")
    assert (
        "values file app/ci/equal-values.yaml line 7: not valid YAML: its aliases expand" in message
    )


QUOTA = """apiVersion: v1
kind: ResourceQuota
metadata:
  name: quota
  annotations:
{laughs}spec:
  hard:
    requests.cpu: "1"
"""


def test_a_rendered_resource_quota_bomb_is_a_finding_naming_the_template(tmp_path: Path) -> None:
    nested = "".join(f"    {line}\n" for line in laughs(key="q").splitlines())
    g = bomb_repo(tmp_path, "app/templates/quota.yaml", QUOTA.format(laughs=nested))
    ((rule, path, message),) = review_within_a_second(g)
    assert (rule, path) == ("head-fails", "app/templates/quota.yaml")
    assert "alias" in message
