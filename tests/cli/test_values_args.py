"""`review --values / --set / --set-string`, parsed as Helm's strvals does and rendered for real; the
progress line of a review of many charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.charts.helm_set import parse_set, typed, values_override
from bot.errors import UsageError
from tests.cli.test_cli import cli
from tests.cli.test_replay import on_a_terminal
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated

DEPLOY = "Deployment/default/release-app"


def assigned(text: str, as_string: bool = False) -> list[tuple[tuple[str | int, ...], Any]]:
    return [(a.path, a.value) for a in parse_set(text, as_string)]


def test_pairs_keys_lists_and_escapes_parse_as_helm_reads_them() -> None:
    assert assigned(r"a.b=c,d[1]=2,e[0].f=x,g[0][1]=y,h=\,x,i\.j=k") == [
        (("a", "b"), "c"),
        (("d", 1), 2),
        (("e", 0, "f"), "x"),
        (("g", 0, 1), "y"),
        (("h",), ",x"),
        (("i.j",), "k"),
    ]
    assert assigned("a={x,1,true},b=") == [(("a",), ["x", 1, True]), (("b",), "")]
    assert assigned("=dropped,a=1,") == [(("a",), 1)]  # Helm sets no empty key


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("FALSE", False),
        ("Null", None),
        ("0", 0),
        ("42", 42),
        ("-7", -7),
        ("007", "007"),  # a leading zero keeps it a string
        ("1.5", "1.5"),  # Helm types no floats
        ("1_000", "1_000"),
        ("9223372036854775808", "9223372036854775808"),  # past int64
    ],
)
def test_values_are_typed_as_helm_types_them(text: str, value: Any) -> None:
    assert typed(text) == value and type(typed(text)) is type(value)
    assert typed(text, as_string=True) == text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("replicas", 'key "replicas" has no value'),
        ("a,b=c", 'key "a" has no value (cannot end with ,)'),
        ("a[x]=1", 'list index "x" is not a number'),
        ("a[-1]=1", "negative list index -1"),
        ("a[70000]=1", "over Helm's maximum of 65536"),
        ("a[0]x=1", 'unexpected "x" after a list index'),
        ("a={x,y", "a list value must end with }"),
        ("a.=1", 'key map "a" has no value'),
        (".".join("k" * 32) + "=1", "nested at most 30 levels"),
    ],
)
def test_what_helm_cannot_parse_is_a_usage_error_naming_it(text: str, why: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_set(text)
    assert str(caught.value).startswith(f"--set '{text}': ")
    assert why in str(caught.value)


def test_set_strings_come_after_every_set_as_in_helm(tmp_path: Path) -> None:
    override = values_override([], ["a=1"], ["a=2"])
    assert override.apply({}) == {"a": "2"}
    override = values_override([], ["a=1,b=2", "a=3"])
    assert override.apply({}) == {"a": 3, "b": 2}


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    """Profile `burst` leaves cpu unlimited (Burstable), `equal` limits it (Guaranteed)."""
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    g.commit("app 1.0.0")
    g.branch("pr").write("app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 1.0.1\n")
    g.commit("bump")
    return g


def review(g: GitBuilder, *extra: str) -> dict[str, Any]:
    proc = cli(
        "review",
        *("--repo", str(g.path), "--base", "develop", "--head", "pr"),
        *("--format", "json", "--no-open-prs", *extra),
    )
    assert proc.returncode == 0, proc.stderr
    return validated(proc.stdout)


def head_qos(report: dict[str, Any]) -> dict[str, str]:
    return {p: pods[DEPLOY] for p, pods in report["charts"][0]["qos"]["head"].items()}


def test_set_applies_to_every_profile_and_misses_the_cache(
    repo: GitBuilder, tmp_path: Path
) -> None:
    cache = ("--cache-dir", str(tmp_path / "cache"))
    assert head_qos(review(repo, *cache)) == {"burst": "Burstable", "equal": "Guaranteed"}
    # Same chart trees, same cache: only the values blob id tells these renders apart.
    limited = review(repo, *cache, "--set", "resources.limits.cpu=100m")
    assert head_qos(limited) == {"burst": "Guaranteed", "equal": "Guaranteed"}
    freed = review(repo, *cache, "--set", "resources.limits=null,resources.requests=null")
    assert head_qos(freed) == {"burst": "BestEffort", "equal": "BestEffort"}


def test_values_files_merge_in_order_and_set_wins(repo: GitBuilder, tmp_path: Path) -> None:
    first = tmp_path / "first.yaml"
    first.write_text("resources:\n  limits:\n    cpu: 100m\n")
    second = tmp_path / "second.yaml"
    second.write_text("resources:\n  limits:\n    cpu: null\n")
    assert head_qos(review(repo, "-f", str(first))) == {
        "burst": "Guaranteed",
        "equal": "Guaranteed",
    }
    later = review(repo, "--values", str(first), "--values", str(second))
    assert head_qos(later) == {"burst": "Burstable", "equal": "Burstable"}
    over = review(repo, "-f", str(second), "--set-string", "resources.limits.cpu=100m")
    assert head_qos(over) == {"burst": "Guaranteed", "equal": "Guaranteed"}


def test_bad_set_or_values_file_exits_2_naming_it(repo: GitBuilder, tmp_path: Path) -> None:
    base = ("review", "--repo", str(repo.path), "--base", "develop", "--head", "pr")
    proc = cli(*base, "--set", "image.tag")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "chart-review: error: --set 'image.tag': key \"tag\" has no value"
    )
    proc = cli(*base, "--values", str(tmp_path / "missing.yaml"))
    assert proc.returncode == 2 and "--values" in proc.stderr and "missing.yaml" in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a list\n")
    proc = cli(*base, "--values", str(bad))
    assert proc.returncode == 2
    assert "bad.yaml line 1: expected a mapping, found a list" in proc.stderr


def test_a_set_into_what_is_no_map_is_a_render_error_on_the_profile(repo: GitBuilder) -> None:
    # As in Helm, --set lands in the values files' values, not the chart's defaults: only
    # `equal`'s own file sets requests.cpu.
    report = review(repo, "--set", "resources.requests.cpu.x=1")
    errors = report["charts"][0]["render_errors"]
    assert {(e["side"], e["profile"]) for e in errors} == {("base", "equal"), ("head", "equal")}
    assert "--set resources.requests.cpu.x=1: cpu is not a map" in errors[0]["message"]


@pytest.fixture
def two_charts(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for name in ("alpha", "beta"):
        for path, text in chart_files(name, name).items():
            g.write(path, text)
    g.commit("two charts")
    return g


def test_all_charts_shows_a_progress_line_on_a_terminal(two_charts: GitBuilder) -> None:
    args = ("review", "--repo", str(two_charts.path), "--base", "develop", "--head", "develop")
    err = on_a_terminal(*args, "--all-charts", "--no-open-prs")
    steps = [s for s in err.replace("\x1b[2K", "").split("\r") if s.startswith("review [")]
    assert [s.strip() for s in steps] == ["review [1/2] alpha", "review [2/2] beta"]
    piped = cli(*args, "--all-charts", "--no-open-prs")
    assert piped.returncode == 0 and "review [" not in piped.stderr
