"""Line numbers as git and GitHub give them, through the command line: a template whose comment
holds form feeds (which `str.splitlines` breaks at and git does not) gets its suggested change on
the lines it verified, and a YAML error after NEL or U+2028 names git's line, in a values file and
in a template."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.textlines import git_lines
from tests.support.gitbuilder import GitBuilder
from tests.support.manifests import guaranteed_web, shipper

CHART_YAML = 'apiVersion: v2\nname: app\nversion: 1.0.0\nappVersion: "1.0.0"\n'
TEMPLATE = "app/templates/web.yaml"
# Three form feeds in a template comment (page breaks, as some editors write them): three lines
# more to str.splitlines, none to git.
FEEDS = "        {{- /* the log shipper\x0c\x0c\x0c        */}}\n"
WEB = guaranteed_web()
# The PR's sidecar, after the comment with the form feeds: its limits lack the cpu it requests.
SHIPPER = shipper()
# And a container after it: three lines below the shipper's limits, `readOnlyRootFilesystem`.
GUARD = """\
        - name: guard
          securityContext:
            readOnlyRootFilesystem: true
          image: example/guard:1
          resources:
            requests:
              cpu: 10m
              memory: 16Mi
            limits:
              cpu: 10m
              memory: 16Mi
"""
HEAD = WEB + FEEDS + SHIPPER + GUARD
SHIPPER_LIMITS = len(git_lines(WEB + FEEDS + SHIPPER))


def review_json(g: GitBuilder, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    main([*args, "--no-open-prs", "--format", "json"])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def commit_as_github(g: GitBuilder, suggestion: dict[str, Any]) -> None:
    """GitHub's "Commit suggestion": lines start_line..line of the file, as git numbers them,
    replaced."""
    text = (g.path / suggestion["path"]).read_text()
    lines = git_lines(text, keepends=True)
    start, end = suggestion["start_line"], suggestion["line"]
    patched = "".join([*lines[: start - 1], suggestion["replacement"], *lines[end:]])
    g.checkout("pr").write(suggestion["path"], patched).commit("Apply suggestions from code review")


def test_a_suggestion_after_form_feeds_replaces_the_lines_it_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = GitBuilder(tmp_path / "repo")
    g.write("app/Chart.yaml", CHART_YAML).write(TEMPLATE, WEB).commit("web")
    g.branch("pr").write(TEMPLATE, HEAD).commit("a log shipper and a guard")
    report = review_json(g, capsys)
    [down] = [f for f in report["findings"] if f["check"] == "qos" and f["rule"] == "downgrade"]
    suggestion = down["data"]["suggestion"]
    assert suggestion["verified_on"] == ["default"]
    # The shipper's limits, `memory: 32Mi`: git's line 32. str.splitlines numbers it 35, which
    # GitHub numbers as the guard's `readOnlyRootFilesystem: true`.
    assert (suggestion["start_line"], suggestion["line"]) == (SHIPPER_LIMITS, SHIPPER_LIMITS)
    assert suggestion["replacement"] == "              memory: 32Mi\n              cpu: 50m\n"
    commit_as_github(g, suggestion)
    after = review_json(g, capsys)
    assert [f for f in after["findings"] if f["check"] == "qos"] == []
    fixed = SHIPPER + "              cpu: 50m\n"
    assert (g.path / TEMPLATE).read_text() == WEB + FEEDS + fixed + GUARD


@pytest.mark.parametrize("odd", ["\u2028", "\x85"])
def test_a_yaml_error_after_odd_line_breaks_names_gits_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], odd: str
) -> None:
    """PyYAML and libyaml count NEL and U+2028 as line breaks; the finding names git's line."""
    broken = f'greeting: "a{odd}b{odd}c"\nname: x\nbad: key: here\nlast: 1\n'
    g = GitBuilder(tmp_path / "repo")
    g.write("app/Chart.yaml", CHART_YAML).write("app/values.yaml", "{}\n")
    g.write("app/ci/one-values.yaml", "{}\n").write("app/ci/two-values.yaml", "{}\n")
    g.write("app/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    g.commit("app").branch("pr")
    g.write("app/ci/one-values.yaml", broken)
    rendered = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  " + broken.replace(
        "\n", "\n  "
    )
    g.write("app/templates/cm.yaml", rendered).commit("values and a template with NEL or U+2028")
    found = {
        (f["path"], f["line"])
        for f in review_json(g, capsys)["findings"]
        if f["check"] == "render" and f["rule"] != "not-reviewed"
    }
    template_line = git_lines(rendered).index("  bad: key: here") + 1
    assert found == {("app/ci/one-values.yaml", 3), ("app/templates/cm.yaml", template_line)}
