"""chart-testing's ct.yaml: where it is read from, what it says, and how the engine honours it
(which charts are reviewed, which branch is the integration branch), on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.ct_config import (
    CT_CHART_DIRS,
    CtConfig,
    CtConfigError,
    load_ct_config,
    parse_ct_config,
)
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.charts import chart_files
from tests.support.gitbuilder import GitBuilder

NO_ENV: dict[str, str] = {}


def with_chart(g: GitBuilder, path: str, version: str = "1.0.0") -> GitBuilder:
    for name, text in chart_files(path, path.rsplit("/", 1)[-1], version).items():
        g.write(name, text)
    return g


def load(g: GitBuilder, ref: str = "develop", env: dict[str, str] | None = None) -> CtConfig:
    return load_ct_config(GitRepo(g.path).tree(g.sha(ref)), env if env is not None else NO_ENV)


# -- what ct.yaml says ----------------------------------------------------------------------------


def test_the_four_keys_are_read_and_ct_s_other_keys_ignored() -> None:
    text = """# See https://example.invalid/ct
remote: upstream
target-branch: main
chart-dirs:
  - ./charts/
  - stable
excluded-charts: [legacy, charts/old]
check-version-increment: false
chart-repos:
  - bitnami=https://charts.example.invalid
helm-extra-args: --timeout 600s
validate-maintainers: false
"""
    ct = parse_ct_config(text, "ct.yaml")
    assert ct == CtConfig(
        source="ct.yaml",
        chart_dirs=("charts", "stable"),
        excluded_charts=("legacy", "charts/old"),
        target_branch="main",
        remote="upstream",
        check_version_increment=False,
    )
    assert ct.target_refs == ("main", "upstream/main")
    assert ct.excludes("charts/legacy") and ct.excludes("charts/old")
    assert not ct.excludes("stable/old")


def test_ct_s_defaults_when_a_key_is_absent() -> None:
    ct = parse_ct_config("validate-maintainers: false\n", ".github/ct.yaml")
    assert (ct.chart_dirs, ct.excluded_charts, ct.target_branch) == (CT_CHART_DIRS, (), None)
    assert ct.check_version_increment is True and ct.target_refs == ()
    assert parse_ct_config("", "ct.yaml") == CtConfig(source="ct.yaml")


def test_comma_separated_strings_as_on_ct_s_command_line() -> None:
    ct = parse_ct_config("chart-dirs: charts,incubator\ncheck-version-increment: 'false'\n", "x")
    assert ct.chart_dirs == ("charts", "incubator") and ct.check_version_increment is False


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("chart-dirs: [charts\n", r"^ct\.yaml line 2: not valid YAML: "),
        ("- charts\n", r"^ct\.yaml line 1: expected a mapping of ct settings$"),
        (
            "remote: origin\nchart-dirs: {a: 1}\n",
            r"^ct\.yaml line 2: 'chart-dirs': expected a list",
        ),
        ("\n\ncheck-version-increment: maybe\n", r"^ct\.yaml line 3: 'check-version-increment'"),
        ("target-branch: [main]\n", r"^ct\.yaml line 1: 'target-branch': expected a string$"),
    ],
)
def test_a_malformed_ct_yaml_is_an_error_naming_file_and_line(text: str, error: str) -> None:
    with pytest.raises(CtConfigError, match=error):
        parse_ct_config(text, "ct.yaml")


# -- where it is read from ------------------------------------------------------------------------


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    return GitBuilder(tmp_path / "repo").write("README.md", "charts\n").commit("init")


def test_no_ct_yaml_is_no_policy(g: GitBuilder) -> None:
    assert load(g) == CtConfig() and load(g).source is None


def test_root_before_dot_github_and_yml_too(g: GitBuilder) -> None:
    g.write(".github/ct.yaml", "target-branch: from-github\n").commit("github ct")
    assert (load(g).source, load(g).target_branch) == (".github/ct.yaml", "from-github")
    g.write("ct.yml", "target-branch: from-root\n").commit("root ct")
    assert (load(g).source, load(g).target_branch) == ("ct.yml", "from-root")


def test_ct_config_names_a_file_in_the_repository(g: GitBuilder) -> None:
    g.write("ct.yaml", "target-branch: root\n").write("ci/lint.yaml", "target-branch: named\n")
    g.commit("two configs")
    assert load(g, env={"CT_CONFIG": "./ci/lint.yaml"}).target_branch == "named"
    with pytest.raises(CtConfigError, match=r"^CT_CONFIG=ci/gone\.yaml: no such file at "):
        load(g, env={"CT_CONFIG": "ci/gone.yaml"})


def test_the_config_the_workflow_gives_ct_lint(g: GitBuilder) -> None:
    g.write(".github/linters/ct.yaml", "target-branch: linted\n")
    g.write("ct.yaml", "target-branch: ignored-by-the-workflow\n")
    g.write(
        ".github/workflows/ci.yaml",
        "jobs:\n  lint:\n    steps:\n"
        "      - run: changed=$(ct --config ./.github/linters/ct.yaml list-changed)\n"
        "      - run: ct lint --debug --config .github/linters/ct.yaml --lint-conf x.yaml\n"
        "      - run: ct install --config .github/install.yaml\n",
    ).commit("workflow")
    assert load(g).source == ".github/linters/ct.yaml"


def workflow(*runs: str) -> str:
    """A workflow with one job running `runs`, a step each."""
    steps = "".join(f"      - run: {run}\n" for run in runs)
    return f"on: pull_request\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"


def test_a_workflow_config_from_an_unknown_variable_or_ambiguous_is_not_guessed(
    g: GitBuilder,
) -> None:
    g.write("ct.yaml", "target-branch: root\n").write("a.yaml", "{}\n").write("b.yaml", "{}\n")
    g.write(".github/workflows/lint.yml", workflow('ct lint --config "${CT_CONFIGFILE}"'))
    g.commit("variable")
    assert load(g).source == "ct.yaml"
    g.write(
        ".github/workflows/two.yml", workflow("ct lint --config a.yaml", "ct lint --config b.yaml")
    )
    g.commit("two lint configs")
    assert load(g).source == "ct.yaml"


def test_a_workflow_config_from_a_variable_the_workflow_sets_is_read(g: GitBuilder) -> None:
    # grafana/helm-charts' shape: a reusable workflow whose input's default names the file.
    g.write("ct.yaml", "target-branch: root\n").write("lint/ct.yaml", "target-branch: named\n")
    g.write(
        ".github/workflows/lint.yml",
        "on:\n  workflow_call:\n    inputs:\n      ct_configfile:\n        default: lint/ct.yaml\n"
        "env:\n  CT_CONFIGFILE: ${{ inputs.ct_configfile }}\n"
        'jobs:\n  lint:\n    steps:\n      - run: ct lint --config "${CT_CONFIGFILE}"\n',
    )
    g.write(
        ".github/workflows/ci.yml",
        "on: pull_request\njobs:\n  lint:\n    uses: ./.github/workflows/lint.yml\n",
    )
    g.commit("reusable")
    assert load(g).source == "lint/ct.yaml"


def test_the_config_a_makefile_target_gives_ct_is_read(g: GitBuilder) -> None:
    # A workflow running `make lint`, whose recipe runs ct with a config under .github/.
    g.write(".github/ct-lint.yaml", "target-branch: from-make\nexcluded-charts: [fixture]\n")
    g.write(
        "Makefile",
        "CT_CONFIG_FILE ?= .github/ct-lint.yaml\n\nlint: deps\n\t@ct lint --config $(CT_CONFIG_FILE)\ndeps:\n\thelm repo update\n",
    )
    g.write(".github/workflows/ci.yml", workflow("make lint"))
    g.commit("make")
    assert (load(g).source, load(g).excluded_charts) == (".github/ct-lint.yaml", ("fixture",))


def test_the_config_a_script_gives_ct_is_read(g: GitBuilder) -> None:
    g.write("ci/ct.yaml", "target-branch: from-script\n")
    g.write("hack/lint.sh", "#!/bin/sh\nset -e\nct lint \\\n  --config ci/ct.yaml \\\n  --all\n")
    g.write(".github/workflows/ci.yml", workflow("./hack/lint.sh"))
    g.commit("script")
    assert load(g).target_branch == "from-script"


def test_a_workflow_over_the_size_cap_is_not_read(g: GitBuilder) -> None:
    from bot.model.ci.workflows import MAX_WORKFLOW_BYTES

    filler = "# padding\n" * (MAX_WORKFLOW_BYTES // 10)
    g.write("lint/ct.yaml", "target-branch: main\n")
    g.write(".github/workflows/big.yml", filler + workflow("ct lint --config lint/ct.yaml"))
    g.commit("a large workflow")
    assert load(g).source is None


# -- the engine honours it ------------------------------------------------------------------------


def review(g: GitBuilder, base: str = "develop", **kw: object):  # type: ignore[no-untyped-def]
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    inp = ReviewInput(base=base, head="pr", only_checks=("version",), **kw)  # type: ignore[arg-type]
    return engine.review(inp)


@pytest.fixture
def monorepo(tmp_path: Path) -> GitBuilder:
    """charts/web and charts/legacy, a test-fixture chart under charts/web/tests/fixtures and one
    under tests/fixtures at the root, an example chart nested in docs/."""
    g = GitBuilder(tmp_path / "repo")
    for path in ("charts/web", "charts/legacy", "tests/fixtures/broken", "docs/examples/demo"):
        with_chart(g, path)
    with_chart(g, "charts/web/tests/fixtures/tiny")
    g.write("ct.yaml", "chart-dirs: [charts]\nexcluded-charts: [legacy]\n").commit("charts")
    g.branch("pr")
    for path in ("charts/web", "charts/legacy", "tests/fixtures/broken", "docs/examples/demo"):
        g.write(f"{path}/values.yaml", "resources: {}\n")
    return g.commit("touch every chart")


def test_chart_dirs_and_excluded_charts_select_the_charts(monorepo: GitBuilder) -> None:
    result = review(monorepo)
    assert [c.path for c in result.report.charts] == ["charts/web"]
    assert review(monorepo, all_charts=True).report.charts[0].path == "charts/web"
    assert len(review(monorepo, all_charts=True).report.charts) == 1


def test_a_chart_ct_would_not_consider_is_reviewed_when_asked_for(monorepo: GitBuilder) -> None:
    result = review(monorepo, charts=("tests/fixtures/broken",))
    assert [c.path for c in result.report.charts] == ["tests/fixtures/broken"]


def test_without_ct_yaml_every_chart_yaml_is_a_chart_as_before(monorepo: GitBuilder) -> None:
    monorepo.checkout("develop").remove("ct.yaml").commit("no ct.yaml")
    paths = [c.path for c in review(monorepo).report.charts]
    assert paths == ["charts/legacy", "charts/web", "docs/examples/demo", "tests/fixtures/broken"]


def test_ct_yaml_whose_chart_dirs_hold_no_chart_reviews_every_chart(tmp_path: Path) -> None:
    g = with_chart(GitBuilder(tmp_path / "repo"), "app").write("ct.yaml", "remote: origin\n")
    g.commit("a chart outside ct's default chart dir").branch("pr")
    g.write("app/values.yaml", "resources: {}\n").commit("change")
    assert [c.path for c in review(g).report.charts] == ["app"]


def test_the_ct_yaml_at_the_target_decides_not_the_pr_s(monorepo: GitBuilder) -> None:
    monorepo.write("ct.yaml", "chart-dirs: [charts, tests/fixtures]\n").commit("widen")
    assert [c.path for c in review(monorepo).report.charts] == ["charts/web"]


def test_target_branch_is_the_integration_branch(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo", branch="main")
    with_chart(g, "charts/web").write("ct.yaml", "target-branch: main\n").commit("web 1.0.0")
    g.branch("develop").write(
        "charts/web/Chart.yaml", chart_files("x", "web", "1.0.1")["x/Chart.yaml"]
    )
    g.commit("an old develop that ct does not use").checkout("main")
    g.branch("pr").write("charts/web/values.yaml", "resources: {}\n").commit("change")
    result = review(g, base="main")
    assert result.context.develop is not None
    assert result.context.develop.commit == g.sha("main")
    # --develop still wins over ct.yaml
    result = review(g, base="main", develop="develop")
    assert result.context.develop is not None and result.context.develop.commit == g.sha("develop")


def test_a_malformed_ct_yaml_stops_the_review_with_its_line(monorepo: GitBuilder) -> None:
    monorepo.checkout("develop").write("ct.yaml", "chart-dirs: [charts\n").commit("broken")
    with pytest.raises(CtConfigError, match=r"^ct\.yaml line 2: not valid YAML"):
        review(monorepo)
