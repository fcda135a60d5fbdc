"""`chart-review` as a user runs it: a real process, real repositories, exit codes and output."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from bot.cli.demo import EXAMPLES, load_prs, scenarios
from bot.cli.main import develop_commit, main
from bot.cli.open_prs import discover_open_prs
from bot.engine.review import Engine
from bot.git.repo import GitRepo
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("good").write("app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.1\n").commit(
        "bump"
    )
    g.checkout("develop").branch("broken")
    g.write("app/templates/broken.yaml", "x: {{ .Values.a.b }}\n").commit("break")
    return g


def test_json_report_has_the_public_shape(repo: GitBuilder) -> None:
    proc = cli(
        "review",
        "--repo",
        str(repo.path),
        "--base",
        "develop",
        "--head",
        "broken",
        "--format",
        "json",
    )
    assert proc.returncode == 1, proc.stderr
    report = validated(proc.stdout)
    assert report["schema"] == 1
    assert report["base"] == repo.sha("develop") and report["head"] == repo.sha("broken")
    (chart,) = report["charts"]
    assert chart["path"] == "app" and chart["name"] == "app"
    assert chart["version"] == {"base": "1.0.0", "head": "1.0.0"}
    assert chart["profiles"] == ["burst", "equal"]
    assert set(chart["qos"]) == {"base", "head"}
    assert chart["render_errors"] == [
        {
            "side": "head",
            "profile": p,
            "template": "app/templates/broken.yaml",
            "line": 1,
            "message": chart["render_errors"][0]["message"],
        }
        for p in ("burst", "equal")
    ]
    finding = next(f for f in report["findings"] if f["check"] == "render")
    assert set(finding) >= {
        "check",
        "severity",
        "chart",
        "profile",
        "subject",
        "title",
        "message",
        "path",
        "line",
        "data",
    }
    assert (finding["severity"], finding["path"], finding["line"]) == (
        "failure",
        "app/templates/broken.yaml",
        1,
    )


def test_exit_zero_without_failures_and_markdown_by_default(repo: GitBuilder) -> None:
    proc = cli("review", "--repo", str(repo.path), "--base", "develop", "--head", "good")
    assert proc.returncode == 0, proc.stderr
    assert "`app` (1.0.0 → 1.0.1; profiles burst, equal)" in proc.stdout


def test_output_file(repo: GitBuilder, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    proc = cli(
        "review",
        "--repo",
        str(repo.path),
        "--base",
        "develop",
        "--head",
        "good",
        "--format",
        "json",
        "--output",
        str(out),
    )
    assert proc.returncode == 0 and proc.stdout == ""
    assert validated(out.read_text())["schema"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "develop", "--head", "nope"], "head 'nope' is not a commit"),
        (["--base", "develop"], "the following arguments are required: --head"),
        (
            ["--base", "develop", "--head", "good", "--format", "xml"],
            "argument --format: invalid choice",
        ),
        (
            ["--base", "develop", "--head", "good", "--profile", "eks"],
            "--profile eks: no chart under review has that profile at base or head",
        ),
        (
            ["--base", "develop", "--head", "good", "--cache-dir", "/dev/null"],
            "--cache-dir /dev/null: not a directory",
        ),
        (
            ["--base", "develop", "--head", "good", "--chart", "zzz"],
            "--chart zzz: no Chart.yaml there",
        ),
    ],
)
def test_exit_two_with_one_line_naming_the_problem(
    repo: GitBuilder, args: list[str], message: str
) -> None:
    proc = cli("review", "--repo", str(repo.path), *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chart-review: error: ")
    assert message in lines[0]


def test_not_a_repository(tmp_path: Path) -> None:
    proc = cli("review", "--repo", str(tmp_path), "--base", "a", "--head", "b")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"chart-review: error: {tmp_path}: not a git repository"


def test_unreadable_config_exits_two(repo: GitBuilder) -> None:
    repo.checkout("develop").write(".github/chart-review.yml", "charts: [a\n").commit("bad config")
    proc = cli("review", "--repo", str(repo.path), "--base", "develop", "--head", "good")
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "chart-review: error: .github/chart-review.yml line 2: not valid YAML"
    )


def test_demo_prints_a_report_per_pull_request() -> None:
    proc = cli("demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # every PR still open in every scenario, whatever scenarios examples/prs/ holds
    still_open = [pr for s in scenarios(EXAMPLES) for pr in load_prs(s) if not pr.merge]
    assert out.count("## PR #") == len(still_open)
    # qos: the init container without resources downgrades the equalised profile only
    assert "| eks | Deployment/default/release-jobs-manager | Guaranteed | Burstable |" in out
    assert "init container wait-for-mysql sets no resources" in out
    # version: the race replayed from a real repository
    assert out.count("develop is at 1.9.59; take 1.9.61") == 2
    assert "chart content changed without a version bump" in out
    # uid, probes, selectors: each scenario's PR introduces the defect its check names
    assert (
        "| ❌ | client | openshift | **Deployment/default/release-mysql: container mysql pins runAsUser"
        in out
    )
    assert "config forbids liveness probes on Deployment/*jobs-manager*" in out
    assert (
        "sets INGESTION_HTTP_PORT=9090, but its readiness and liveness probes check port 8080"
        in out
    )
    assert "no pod carries app.kubernetes.io/name; the budget protects no pod" in out
    assert (
        "no pod carries app.kubernetes.io/component; it most plausibly means the pods of "
        "Deployment release-jobs-manager (it meets 1 of the selector's 2 requirements), which "
        "carry `app: jobs-manager`. The command would act on nothing."
    ) in out
    assert "Service/default/release-mysql now sets publishNotReadyAddresses: true" in out


def test_version_names_the_installed_release() -> None:
    proc = cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"chart-review {version('chart-review-bot')}"


def test_an_unknown_develop_ref_is_an_error_not_a_fallback(repo: GitBuilder) -> None:
    args = ("review", "--repo", str(repo.path), "--base", "develop", "--head", "good")
    proc = cli(*args, "--develop", "no-such-branch")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"chart-review: error: --develop 'no-such-branch' is not a commit in {repo.path}"
    )


def test_a_bug_is_an_internal_error_with_exit_three_not_a_usage_error(
    repo: GitBuilder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise ValueError("a bug, not bad input")

    monkeypatch.setattr(Engine, "review", broken)  # the fault: any error that is not the user's
    code = main(["review", "--repo", str(repo.path), "--base", "develop", "--head", "good"])
    err = capsys.readouterr().err
    assert code == 3
    assert "Traceback" in err and "ValueError: a bug, not bad input" in err
    assert err.strip().splitlines()[-1] == (
        "chart-review: internal error, please report it with the traceback above: "
        "ValueError: a bug, not bad input"
    )


def test_open_prs_are_measured_against_the_configured_develop(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo", branch="main")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write(".github/chart-review.yml", "develop: integration\n").commit("app 1.0.0")
    g.branch("integration").branch("merged").write("app/NOTES.txt", "hi\n").commit("merged")
    g.checkout("integration").merge("merged")
    repo = GitRepo(g.path)
    # Merged into the configured integration branch: no longer an open PR's head.
    assert develop_commit(repo, None, "main") == g.sha("integration")
    open_heads = discover_open_prs(repo, g.sha("integration"), None, exclude_head=None)
    assert g.sha("merged") not in {pr.head for pr in open_heads}


def test_a_cache_dir_this_process_cannot_write_is_a_usage_error(
    repo: GitBuilder, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    args = ("review", "--repo", str(repo.path), "--base", "develop", "--head", "good")
    proc = cli(*args, "--cache-dir", str(locked), "--profile", "equal")
    if os.geteuid() == 0:  # root writes anywhere: the directory is usable, and the profile exists
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.stderr.strip() == f"chart-review: error: --cache-dir {locked}: not writable"


def _monitored(tmp_path: Path) -> GitBuilder:
    """A chart whose ServiceMonitor template, rendered only when the API version is there, needs a
    value no profile sets: its render error shows that it rendered."""
    g = GitBuilder(tmp_path / "monitored")
    g.write("mon/Chart.yaml", "apiVersion: v2\nname: mon\nversion: 1.0.0\n")
    g.write("mon/values.yaml", "{}\n")
    guarded = (
        '{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}\n'
        '{{ required "serviceMonitor.port is required" .Values.serviceMonitor }}\n'
        "{{- end }}\n"
    )
    g.write("mon/templates/sm.yaml", guarded).commit("mon 1.0.0").branch("pr")
    return g.write("mon/values.yaml", "replicas: 1\n").commit("values")


def test_api_versions_and_kube_version_options_reach_helm_and_the_report(tmp_path: Path) -> None:
    g = _monitored(tmp_path)
    args = ("review", "--repo", str(g.path), "--base", "develop", "--head", "pr")
    plain = validated(cli(*args, "--format", "json").stdout)
    assert plain["charts"][0]["render_errors"] == []
    versions = ("--api-versions", "x.io/v1", "--api-versions", "monitoring.coreos.com/v1,x.io/v1")
    proc = cli(*args, "--format", "json", "--kube-version", "1.29", *versions)
    told = validated(proc.stdout)
    errors = told["charts"][0]["render_errors"]
    assert [(e["side"], e["template"], e["line"]) for e in errors] == [
        ("base", "mon/templates/sm.yaml", 2),
        ("head", "mon/templates/sm.yaml", 2),
    ]
    assert all(e["message"].endswith("serviceMonitor.port is required") for e in errors)
    assert told["charts"][0]["capabilities"] == {
        "kube_version": "v1.29.0",
        "kube_version_default": False,
        "api_versions": ["monitoring.coreos.com/v1", "x.io/v1"],
    }


def test_a_bad_kube_version_option_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    g = _monitored(tmp_path)
    args = ("review", "--repo", str(g.path), "--base", "develop", "--head", "pr")
    proc = cli(*args, "--kube-version", "latest")
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "chart-review: error: --kube-version: 'latest' is not a Kubernetes"
    )


def test_the_command_line_tunes_its_process_for_reviews() -> None:
    from bot.review_process import MIDDLE, OLD, SWITCH_INTERVAL, YOUNG

    # Set by main() itself, so the Action and the App's serve and worker commands get them too.
    code = (
        "import gc, sys\nfrom bot.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('thresholds', *gc.get_threshold())\n"
        "print('switch', sys.getswitchinterval())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.splitlines()[-2] == f"thresholds {YOUNG} {MIDDLE} {OLD}"
    assert YOUNG > 700  # Python's default
    assert float(proc.stdout.splitlines()[-1].split()[1]) == pytest.approx(SWITCH_INTERVAL)
    assert SWITCH_INTERVAL < 0.005  # Python's default
