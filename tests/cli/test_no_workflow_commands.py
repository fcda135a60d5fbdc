"""What `review` prints for people never starts a GitHub Actions workflow command: a profile file
named `ci/a\\n::warning::X-values.yaml`, a rendered value `::warning::Y` in the diff, a Helm error
saying `\\n::error::Z`, a `##[warning]` anywhere. The runner reads a line of a step's output as a
command when it starts with `::` after its spaces, or holds `##[`: names in prose carry no raw line
break, and PR text on a line of its own cannot open one."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

PROFILE = "app/ci/a\n::warning::X-values.yaml"
CONFIG_MAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: notes}
data:
  script: |
    echo start
    ::warning::Y
  legacy: "##[warning]L"
"""
FAILING = '{{ if .Values.fail }}{{ fail "oops\\n::error::Z" }}{{ end }}\n'


def commands(text: str) -> list[str]:
    """The lines of `text` the runner would run as workflow commands."""
    return [line for line in text.split("\n") if line.lstrip().startswith("::") or "##[" in line]


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write("app/templates/notes.yaml", CONFIG_MAP.replace("start", "one"))
    g.write("app/templates/fail.yaml", FAILING).commit("app").branch("pr")
    g.write(PROFILE, "resources:\n  requests: {cpu: 1}\n")
    g.write("app/ci/broken-values.yaml", "fail: true\n")
    g.write("app/templates/notes.yaml", CONFIG_MAP).commit("a profile, a script, a failure")
    return g


def review(repo: GitBuilder, *extra: str) -> int:
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", "pr"]
    return main([*args, "--no-open-prs", *extra])


@pytest.mark.parametrize("extra", [(), ("--explain",), ("--diff",)])
def test_nothing_printed_is_a_workflow_command(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...]
) -> None:
    review(repo, *extra)
    out = capsys.readouterr().out
    assert "::warning::Y" in out and "##\u200b[warning]L" in out  # shown, not run
    assert commands(out) == []


def test_a_profile_name_in_a_finding_stays_on_its_line(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    review(repo)
    out = capsys.readouterr().out
    [added] = [line for line in out.split("\n") if "added: 1 pod" in line]
    assert added.startswith("- ") and "profile a ::warning::X added" in added
    assert "::error::Z" in out
