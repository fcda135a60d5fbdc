"""The report on a terminal: the real `chart-review` under a pseudo-terminal (tests/support/pty_run.py),
rendered with rich; in a pipe, the markdown exactly as before; rich never loaded on the review path."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.demo import EXAMPLES, load_prs, scenarios
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.pty_run import SGR_RE, cli, run_on_terminal

# What a rendered report never shows: the markdown's HTML folds, tables, fences, bold and headings.
MARKDOWN_MARKS = ("<details>", "<summary>", "| --- |", "```", "**", "\n## ", "\n### ")
# A colour in an SGR sequence: 30–37, 90–97 (foreground), 38;5;N / 38;2;R;G;B.
COLOUR_RE = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-8]|9[0-7])[;m]")
# A screenful: each demo scenario fits a terminal this size.
DEMO_COLUMNS, DEMO_ROWS = 100, 30
SCENARIO_RULE_RE = re.compile(r"^─+ Scenario: (\S+) ─+$")
# A PR's template makes Helm fail with a message of escapes: clear the screen, home the cursor,
# retitle the window, then forge our verdict.
FORGED = "\x1b[2J\x1b[H\x1b]0;pwned\x07✅ chart-review: no findings"
FORGING_TEMPLATE = '{{ fail "\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07✅ chart-review: no findings" }}\n'
# The memory limit's line in the Deployment's diff, after its `-` or `+`.
LIMIT = " " * 12 + "memory: "
MORE_MEMORY = "resources:\n  requests:\n    cpu: 100m\n    memory: 64Mi\n  limits:\n"


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    """`memory`: the limit of the `burst` profile raised without the version bump the repository
    asks for (a failure, and a
    rendered diff with a line taken out and one put in). `forged`: a template whose render error
    is PR text full of escape sequences."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.write(".github/chart-review.yml", "version: {bump: per-change}\n").commit("app 1.0.0")
    g.branch("memory").write("app/values.yaml", f"{MORE_MEMORY}    memory: 128Mi\n").commit("more")
    g.checkout("develop").branch("forged")
    g.write("app/templates/forged.yaml", FORGING_TEMPLATE).commit("forge")
    return g


def review_args(repo: GitBuilder, head: str, *extra: str) -> list[str]:
    return ["review", "--repo", str(repo.path), "--base", "develop", "--head", head, *extra]


def piped(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cli(*args), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return proc


def test_a_review_on_a_terminal_is_rendered_with_its_verdict_and_the_diff_coloured(
    repo: GitBuilder,
) -> None:
    markdown = piped(*review_args(repo, "memory", "--no-open-prs"))
    run = run_on_terminal(cli(*review_args(repo, "memory", "--no-open-prs")))
    assert run.returncode == markdown.returncode == 1, run.stderr
    lines = run.lines()
    # The verdict line first, as the markdown's headline says it, in the failure's bold red.
    headline = markdown.stdout.splitlines()[0].removeprefix("## ")
    assert headline.startswith("❌ chart-review: 1 failure")
    assert lines[0] == headline
    assert f"\x1b[1;31m{headline}\x1b[0m" in run.screen
    # The check that found it is a heading, its finding under it with where it is.
    assert "Chart versions: 1 failure" in lines
    assert any(line.startswith("❌ app: chart content changed") for line in lines)
    assert any("app/Chart.yaml:3 · app" in line for line in lines)
    # The rendered diff: the line taken out red, the line put in green, the hunk cyan.
    assert "Rendered diff" in lines and "app: 1 of 2 profiles changed" in lines
    assert f"\x1b[31m-{LIMIT}64Mi\x1b[0m\n\x1b[32m+{LIMIT}128Mi\x1b[0m" in run.screen
    assert "\x1b[36m@@\x1b[0m" in run.screen
    for mark in MARKDOWN_MARKS:
        assert mark not in run.text, mark


def test_in_a_pipe_and_with_format_markdown_the_markdown_is_the_same_bytes(
    repo: GitBuilder, tmp_path: Path
) -> None:
    """`--format markdown` on a terminal, the default in a pipe and `--output` on a terminal all
    give the markdown, byte for byte the same (a terminal reads `\\n` back as `\\r\\n`)."""
    args = review_args(repo, "memory", "--no-open-prs")
    default = piped(*args).stdout
    assert default.startswith("## ❌ chart-review: 1 failure") and "<details>" in default
    assert piped(*args, "--format", "markdown").stdout == default
    on_terminal = run_on_terminal(cli(*args, "--format", "markdown"))
    assert on_terminal.screen == default
    out = tmp_path / "report.md"
    to_file = run_on_terminal(cli(*args, "--output", str(out)))
    assert (to_file.returncode, to_file.screen) == (1, "")
    assert out.read_text() == default


def test_no_color_drops_the_colours_and_a_dumb_terminal_every_escape(repo: GitBuilder) -> None:
    args = cli(*review_args(repo, "memory", "--no-open-prs"))
    no_color = run_on_terminal(args, env={"NO_COLOR": "1"})
    assert no_color.returncode == 1
    assert no_color.lines()[0].startswith("❌ chart-review: 1 failure")
    assert SGR_RE.search(no_color.screen), "bold and dim stay"
    assert not COLOUR_RE.search(no_color.screen)
    assert f"-{LIMIT}64Mi" in no_color.lines()
    dumb = run_on_terminal(args, env={"TERM": "dumb"})
    assert dumb.lines()[0].startswith("❌ chart-review: 1 failure")
    assert "\x1b" not in dumb.screen and "Chart versions: 1 failure" in dumb.lines()


def test_a_render_error_of_escape_sequences_is_shown_not_obeyed(repo: GitBuilder) -> None:
    """Helm's `fail` message is the PR's text: on the terminal its escapes are shown as `\\u001b`,
    so it cannot clear the screen, retitle the window or print a verdict of its own."""
    run = run_on_terminal(cli(*review_args(repo, "forged", "--no-open-prs")))
    assert run.returncode == 1, run.stderr
    assert run.lines()[0].startswith("❌ chart-review: ")
    for sequence in ("\x1b[2J", "\x1b[H", "\x1b]0;", "\x07"):
        assert sequence not in run.screen
    shown = "\\u001b[2J\\u001b[H\\u001b]0;pwned\\u0007✅ chart-review: no findings"
    assert shown in run.text.replace("\n", "")
    assert not any(line.startswith("✅") for line in run.lines())


def test_the_diff_option_on_a_terminal_is_coloured(repo: GitBuilder) -> None:
    args = review_args(repo, "memory", "--no-open-prs", "--diff")
    run = run_on_terminal(cli(*args))
    assert run.returncode == 1
    assert run.text == piped(*args).stdout
    assert "\x1b[1m# app: burst\x1b[0m" in run.screen
    assert f"\x1b[32m+{LIMIT}128Mi\x1b[0m" in run.screen


def test_the_demo_shows_each_scenario_in_a_screenful() -> None:
    run = run_on_terminal(cli("demo"), columns=DEMO_COLUMNS, rows=DEMO_ROWS)
    assert run.returncode == 0, run.stderr
    by_scenario: dict[str, list[str]] = {}
    for line in run.lines():
        if m := SCENARIO_RULE_RE.match(line):
            by_scenario[m.group(1)] = []
        if by_scenario:
            by_scenario[next(reversed(by_scenario))].append(line)
    by_scenario["version"] = by_scenario["version"][: by_scenario["version"].index("")]
    assert list(by_scenario) == [s.name for s in scenarios(EXAMPLES)]
    sizes = {name: len(lines) for name, lines in by_scenario.items()}
    assert max(sizes.values()) <= DEMO_ROWS, sizes
    # Every open PR, each with its verdict line, the checks' findings in a line each.
    still_open = [pr for s in scenarios(EXAMPLES) for pr in load_prs(s) if not pr.merge]
    text = run.text
    assert [int(n) for n in re.findall(r"^PR #(\d+) ", text, re.M)] == [
        p.number for p in still_open
    ]
    assert len(re.findall(r"^(?:❌|⚠️|✅) chart-review: ", text, re.M)) == len(still_open)
    assert text.count("develop is at 1.9.59; take 1.9.61 · client/Chart.yaml:5") == 2
    assert (
        "❌ Deployment/default/release-mysql: container mysql pins runAsUser on openshift" in text
    )
    for mark in MARKDOWN_MARKS:
        assert mark not in text, mark


def test_rich_is_not_imported_on_the_review_path(repo: GitBuilder) -> None:
    """A fresh interpreter imports every entry point and reviews in a pipe: rich is not loaded.
    The same check sees it once the terminal rendering is imported."""
    loaded = "'rich' in sys.modules"
    entry_points = "bot.cli.main, bot.cli.demo, bot.action.run, bot.app.jobs, webhooks.app"
    review = review_args(repo, "memory", "--no-open-prs")
    script = (
        f"import sys, {entry_points}\n"
        f"before = {loaded}\n"
        f"status = bot.cli.main.main({review!r})\n"
        f"print(before, {loaded}, status, file=sys.stderr)\n"
        "import bot.cli.terminal.report\n"
        f"print({loaded}, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## ❌ chart-review: 1 failure")
    assert proc.stderr.splitlines()[-2:] == ["False False 1", "True"]
