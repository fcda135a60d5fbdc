"""`review --format github` (workflow-command annotations) and `--fail-on`, on real reviews."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli.main import main
from bot.model.report import Finding, Severity
from bot.report.annotations import workflow_command
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

# The version check's missing bump made a warning by the repository's own config.
WARN_ON_BUMP = "version:\n  severity: {missing-bump: warning}\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    """`broken`: a template that fails to render (failures). `nobump`: a content change without a
    version bump, which the config at develop makes a warning (the only finding)."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write(".github/chart-review.yml", WARN_ON_BUMP).commit("app 1.0.0")
    g.branch("broken").write("app/templates/broken.yaml", "x: {{ .Values.a.b }}\n").commit("break")
    g.checkout("develop").branch("nobump")
    g.write("app/templates/cm.yaml", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: c}\n")
    g.commit("add a config map")
    return g


def review(repo: GitBuilder, head: str, *extra: str) -> int:
    args = ["review", "--repo", str(repo.path), "--base", "develop", "--head", head]
    return main([*args, "--no-open-prs", *extra])


def test_workflow_command_escapes_its_message_and_properties() -> None:
    f = Finding(
        check="probes",
        severity=Severity.WARNING,
        rule="port",
        title="port: http, not 8080 (100%)",
        message="line one\r\nline two: 50% done",
        chart="web",
        path="web/templates/a,b:c.yaml",
        line=7,
    )
    assert workflow_command(f) == (
        "::warning file=web/templates/a%2Cb%3Ac.yaml,line=7,"
        "title=chart-review/probes%3A port%3A http%2C not 8080 (100%25)"
        "::line one%0D%0Aline two: 50%25 done%0A%0A(chart web)"
    )


def test_a_notice_without_a_file_is_annotated_on_its_chart() -> None:
    f = Finding(check="uid", severity=Severity.NOTICE, title="t", message="m", chart="charts/db")
    expected = (
        "::notice file=charts/db/Chart.yaml,title=chart-review/uid%3A t::m%0A%0A(chart charts/db)"
    )
    assert workflow_command(f) == expected


def test_github_format_annotates_a_real_review(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(repo, "broken", "--format", "github") == 1
    lines = capsys.readouterr().out.splitlines()
    # Worst first; the missing bump is a warning by this repository's config.
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning", "::warning"]
    render, not_reviewed, bump = lines
    assert render.startswith(
        "::error file=app/templates/broken.yaml,line=1,"
        "title=chart-review/render%3A app fails to render on profiles burst%2C equal::"
    )
    assert not_reviewed.startswith("::warning file=app/Chart.yaml,title=chart-review/render%3A ")
    assert bump.startswith("::warning file=app/Chart.yaml,line=3,title=chart-review/version%3A ")


@pytest.mark.parametrize(
    ("head", "fail_on", "code"),
    [
        ("broken", None, 1),
        ("broken", "failure", 1),
        ("broken", "never", 0),
        ("nobump", None, 0),  # a warning alone does not fail by default
        ("nobump", "warning", 1),
        ("nobump", "never", 0),
    ],
)
def test_fail_on_sets_the_exit_status(
    repo: GitBuilder, head: str, fail_on: str | None, code: int
) -> None:
    assert (
        review(repo, head, "--format", "json", *(["--fail-on", fail_on] if fail_on else [])) == code
    )


def test_nobump_has_exactly_one_warning(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the exit statuses above stand on: the warning is the review's only finding."""
    review(repo, "nobump", "--format", "github")
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("::warning file=app/Chart.yaml,line=3,title=chart-review/version%3A ")


def test_never_still_exits_2_when_the_review_cannot_run(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(repo, "no-such-branch", "--fail-on", "never") == 2
    assert "head 'no-such-branch' is not a commit" in capsys.readouterr().err


def test_an_unknown_fail_on_is_a_usage_error(
    repo: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(repo, "broken", "--fail-on", "notice") == 2
    assert "--fail-on: invalid choice: 'notice'" in capsys.readouterr().err
