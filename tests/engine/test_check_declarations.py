"""A check declares what it needs and how its options are read; the engine names no check. A check
of any name that needs lint is given lint, and its options model reads its keys from the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.check import Check, Need, Registry
from bot.model.config import CheckConfig, CheckOptions, ConfigError, parse_config
from bot.model.context import ChartContext
from bot.model.report import Finding, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.versions.options import VersionConfig
from checks import REGISTRY
from checks.probes.options import ProbesConfig
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder


class LimitsConfig(CheckConfig):
    most: int = Field(default=3, ge=1)


def _repo(tmp_path: Path, config: str | None = None) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    for path, text in chart_files().items():
        g.write(path, text)
    if config is not None:
        g.write(".github/chart-review.yml", config)
    g.commit("app 1.0.0")
    g.branch("pr").write("app/NOTES.txt", "hi\n").commit("notes")
    return g


def _review(g: GitBuilder, *checks: Check[ChartContext]) -> list[Finding]:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), Registry(checks), RenderCache())
    return list(engine.review(ReviewInput(base="develop", head="pr")).report.findings)


def _lint_seen(ctx: ChartContext) -> list[Finding]:
    linted = sorted(p for p, r in ctx.chart.head.items() if r.lint is not None)
    return [Finding(ctx.chart.path, Severity.NOTICE, "linted", ", ".join(linted) or "none")]


def test_a_check_of_any_name_that_needs_lint_is_given_lint_and_only_then(tmp_path: Path) -> None:
    g = _repo(tmp_path)
    needing = Check("mine", "Mine", _lint_seen, needs=frozenset({Need.LINT}))
    [said] = _review(g, needing)
    assert (
        said.message != "none"
    )  # profiles rendering alike are linted once (bot/charts/lint_plan.py)
    [said] = _review(g, Check("mine", "Mine", _lint_seen))
    assert said.message == "none"


def _most(ctx: ChartContext) -> list[Finding]:
    most = ctx.config.options("limits", LimitsConfig).most
    return [Finding("limits", Severity.NOTICE, "most", str(most))]


@pytest.mark.parametrize("top_level", [False, True])
def test_the_engine_reads_a_check_s_options_with_the_model_it_declares(
    tmp_path: Path, top_level: bool
) -> None:
    text = "limits:\n  most: 5\n" if top_level else "checks:\n  limits:\n    most: 5\n"
    check = Check("limits", "Limits", _most, options=LimitsConfig, options_top_level=top_level)
    [said] = _review(_repo(tmp_path, text), check)
    assert said.message == "5"


LIMITS = (CheckOptions("limits", LimitsConfig),)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("checks:\n  limits:\n    mots: 5\n", "line 3: unknown key 'checks.limits.mots'"),
        ("checks:\n  limits:\n    most: 0\n", "line 3: 'checks.limits.most': Input should be"),
        ("checks:\n  limits: [1]\n", "line 2: 'checks.limits': Input should be"),
        ("checks: [limits]\n", "line 1: 'checks': expected a mapping of checks by name"),
    ],
)
def test_a_check_s_options_refused_by_its_model_name_the_key_and_line(
    text: str, error: str
) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_config(text, known_checks=LIMITS)


def test_a_check_whose_options_are_at_the_top_level_is_refused_under_checks() -> None:
    top = (CheckOptions("limits", LimitsConfig, top_level=True),)
    with pytest.raises(ConfigError, match=r"line 2: 'checks.limits': .* top-level 'limits:' key"):
        parse_config("checks:\n  limits: {}\n", known_checks=top)
    with pytest.raises(ConfigError, match="unknown key 'limits'"):
        parse_config("limits: {}\n", known_checks=LIMITS)


# The README's example config as it stood when the checks took over their options: every key
# still reads as it did, into the same values.
TODAY = """\
kube_version: "1.29"
profiles:
  - {name: openshift, chart: client, values_file: client/ci/oc-values.yaml, arbitrary_uid: true}
checks:
  qos: {severity: {downgrade: warning}}
  headings: {enabled: false}
version:
  bump: {charts/legacy: at-release, "*": per-change}
  ignore: [examples/**]
probes:
  enabled: true
  forbid: {"Deployment/*jobs-manager*": [liveness, startup]}
"""


def test_today_s_config_keys_read_as_before() -> None:
    config = parse_config(TODAY, known_checks=REGISTRY.options)
    assert config.kube_version == "v1.29.0" and config.profiles[0].arbitrary_uid
    assert config.check("qos").severity == {"downgrade": "warning"}
    assert not config.enabled("headings") and config.enabled("qos") and config.enabled("lint")
    version = config.options("version", VersionConfig)
    assert version.bump == {"charts/legacy": "at-release", "*": "per-change"}
    assert version.ignore == ["examples/**"]
    probes = config.options("probes", ProbesConfig)
    assert probes.forbid == {"Deployment/*jobs-manager*": ["liveness", "startup"]}
    assert config.enabled("probes") and config.check("version").severity is None


def test_a_check_the_file_does_not_name_has_its_model_s_defaults() -> None:
    config = parse_config("release_name: r\n", known_checks=REGISTRY.options)
    assert config.options("version", VersionConfig) == VersionConfig()
    assert config.options("probes", ProbesConfig).forbid == {}
    assert config.enabled("version") and config.check("nosuch") == CheckConfig()
