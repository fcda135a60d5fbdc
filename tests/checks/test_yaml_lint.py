"""The `yaml` check: ct lint's yamllint and Chart.yaml schema, with the settings CI runs ct lint
with (here a workflow running `make lint`, whose target runs `ct lint --config .github/ct.yaml`),
on contexts from the repository's files (tests/support/check_context.py); one PR, and the
command line's JSON report, on a real git repository reviewed by the real engine with real Helm
renders."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.report import Finding, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from checks.yaml import problems
from tests.support.check_context import review_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated

CHART = "charts/app"
CHART_YAML = "apiVersion: v2\nname: app\nversion: 1.0.0\n"
VALUES = 'image:\n  repository: example/app\n  tag: "1"\n'
TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: b\n"
WORKFLOW = (
    "on: pull_request\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - uses: actions/checkout@v4\n      - run: make lint\n"
)
MAKEFILE = "CT_CONFIG := .github/ct.yaml\n.PHONY: lint\nlint:\n\tct lint --config $(CT_CONFIG)\n"
CT_YAML = "chart-dirs: [charts]\nlint-conf: .github/lintconf.yaml\n"
# ct's default config with line-length enabled, which ct's own disables: only this one says it.
LINT_CONF = (
    (Path(__file__).parents[2] / "checks/yaml/ct_defaults/lintconf.yaml")
    .read_text()
    .replace("line-length: disable", "line-length: {max: 40}")
)
SAID_BY = "`ct lint` at .github/workflows/ci.yaml line 7, Makefile line 4 with .github/ct.yaml"
Files = Mapping[str, str | None]


def ci(ct_yaml: str = CT_YAML, makefile: str = MAKEFILE) -> dict[str, str]:
    return {
        ".github/workflows/ci.yaml": WORKFLOW,
        "Makefile": makefile,
        ".github/ct.yaml": ct_yaml,
        ".github/lintconf.yaml": LINT_CONF,
    }


def chart(values: str = VALUES, chart_yaml: str = CHART_YAML, **more: str) -> dict[str, str]:
    files = {
        f"{CHART}/Chart.yaml": chart_yaml,
        f"{CHART}/values.yaml": values,
        f"{CHART}/templates/cm.yaml": TEMPLATE,
    }
    return files | {f"{CHART}/{path}": text for path, text in more.items()}


def review(tmp_path: Path, base: Files, head: Files) -> list[Finding]:
    """The yaml check's findings on the PR, reviewed end to end: git, Helm, the engine."""
    g = GitBuilder(tmp_path / "repo")
    _lay(g, base)
    g.commit("base").branch("pr")
    _lay(g, head)
    g.commit("the pull request")
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    inp = ReviewInput(base="develop", head="pr", only_checks=("yaml",))
    return engine.review(inp).report.findings_for("yaml")


def lint(base: Files, head: Files) -> list[Finding]:
    """The same on a context from the files alone (tests/support/check_context.py)."""
    return review_files(base, head, "yaml", chart=CHART)


def _lay(g: GitBuilder, files: Files) -> None:
    for path, text in files.items():
        if text is None:
            g.remove(path)
        else:
            g.write(path, text)


def test_a_line_the_repository_lint_conf_refuses_fails_and_a_truthy_value_warns(
    tmp_path: Path,
) -> None:
    head_values = VALUES + "enabled: yes\nlabel: a-rather-long-value-of-more-than-forty\n"
    found = review(tmp_path, ci() | chart(), chart(values=head_values))
    path = f"{CHART}/values.yaml"
    assert found == [
        Finding(
            check="yaml",
            severity=Severity.FAILURE,
            title=f"{path} line 5: line too long (45 > 40 characters) (line-length)",
            message=(
                f"yamllint, with .github/lintconf.yaml, reports an error in {path} line 5, "
                "column 41: line too long (45 > 40 characters) (line-length). `ct lint` fails "
                f"on it ({SAID_BY})."
            ),
            rule="yamllint-error",
            chart=CHART,
            subject=path,
            path=path,
            line=5,
            data={
                "detail": "line-length: line too long (45 > 40 characters) on "
                "`label: a-rather-long-value-of-more-than-forty` #1",
                "yamllint_rule": "line-length",
                "level": "error",
                "column": 41,
                "config": ".github/lintconf.yaml",
            },
        ),
        Finding(
            check="yaml",
            severity=Severity.WARNING,
            title=f"{path} line 4: truthy value should be one of [false, true] (truthy)",
            message=(
                f"yamllint, with .github/lintconf.yaml, reports a warning in {path} line 4, "
                "column 10: truthy value should be one of [false, true] (truthy). `ct lint` "
                f"prints it and passes, as yamllint fails only on errors ({SAID_BY})."
            ),
            rule="yamllint-warning",
            chart=CHART,
            subject=path,
            path=path,
            line=4,
            data={
                "detail": "truthy: truthy value should be one of [false, true] on `enabled: yes` #1",
                "yamllint_rule": "truthy",
                "level": "warning",
                "column": 10,
                "config": ".github/lintconf.yaml",
            },
        ),
    ]


def test_a_problem_the_file_had_at_base_is_folded_however_the_lines_moved() -> None:
    base_values = VALUES + "trailing: x \n"
    head_values = "# the image\n" + base_values + "more: y\n"
    [found] = lint(ci() | chart(values=base_values), chart(values=head_values))
    assert (found.severity, found.rule, found.line, found.preexisting) == (
        Severity.NOTICE,
        "yamllint-error",
        5,
        True,
    )
    assert found.message.endswith("Already so at base, so not this PR's doing.")


def test_the_base_s_file_is_linted_only_where_the_head_s_has_a_problem(tmp_path: Path) -> None:
    """Folding needs the base's problems only for a head problem: a PR that cleans a file is
    linted at head alone (yamllint costs some 6 ms a KB), and says nothing."""
    unique = f"marker: {tmp_path.name}\n"  # texts no other test linted: the memo is per process
    base_values = VALUES + unique + "trailing: x \n"
    head_values = VALUES + unique + "trailing: x\n"
    assert lint(ci() | chart(values=base_values), chart(values=head_values)) == []
    linted = {key[2] for key in problems._YAMLLINT.held_keys()}
    assert problems._digest(head_values) in linted
    assert problems._digest(base_values) not in linted


def test_a_file_the_pr_did_not_change_is_not_read() -> None:
    messy = VALUES + "trailing: x \n"
    head_chart = CHART_YAML.replace("1.0.0", "1.0.1")
    assert lint(ci() | chart(values=messy), chart(values=messy, chart_yaml=head_chart)) == []


def test_a_chart_yaml_key_the_schema_does_not_know_fails_with_its_line() -> None:
    head_chart = CHART_YAML + "maintainers:\n  - name: me\n    mail: me@example.com\n"
    [found] = lint(ci() | chart(), chart(chart_yaml=head_chart))
    path = f"{CHART}/Chart.yaml"
    assert found == Finding(
        check="yaml",
        severity=Severity.FAILURE,
        title=f"{path}: maintainers.0.mail: Unexpected element",
        message=(
            f"{path} does not match ct's default chart_schema.yaml (yamale, strict, as `ct lint` "
            f"runs it): maintainers.0.mail: Unexpected element. `ct lint` fails on it ({SAID_BY})."
        ),
        rule="chart-schema",
        chart=CHART,
        subject=path,
        path=path,
        line=6,
        data={
            "detail": "maintainers.0.mail: Unexpected element",
            "key": "maintainers.0.mail",
            "schema": "ct's default chart_schema.yaml",
        },
    )


def test_the_repository_schema_and_a_values_file_of_a_profile() -> None:
    ct_yaml = CT_YAML + "chart-yaml-schema: .github/chart_schema.yaml\n"
    schema = "name: str()\nversion: str()\napiVersion: str()\nowner: str()\n"
    base = ci(ct_yaml) | {".github/chart_schema.yaml": schema} | chart()
    bumped = CHART_YAML.replace("1.0.0", "1.0.1")
    head = chart(chart_yaml=bumped, **{"ci/eks-values.yaml": "replicas:  2\n"})
    found = lint(base, head)
    assert sorted((f.severity, f.rule, f.path, f.line, f.title) for f in found) == [
        (
            Severity.FAILURE,
            "yamllint-error",
            f"{CHART}/ci/eks-values.yaml",
            1,
            f"{CHART}/ci/eks-values.yaml line 1: too many spaces after colon (colons)",
        ),
        (
            Severity.NOTICE,
            "chart-schema",
            f"{CHART}/Chart.yaml",
            None,
            f"{CHART}/Chart.yaml: owner: Required field missing (already at base)",
        ),
    ]


def test_ct_settings_that_turn_the_validations_off_are_honoured() -> None:
    # The config file turns yamllint off; the command line CI runs turns the schema off.
    makefile = MAKEFILE.replace("$(CT_CONFIG)", "$(CT_CONFIG) --validate-chart-schema=false")
    base = ci(CT_YAML + "validate-yaml: false\n", makefile) | chart()
    head = chart(values=VALUES + "x: yes \n", chart_yaml=CHART_YAML + "foo: bar\n")
    assert lint(base, head) == []
    # ... and only the schema, from the command line, when the config turns yamllint on again.
    on = ci(CT_YAML + "validate-yaml: true\n", makefile) | chart()
    assert {f.rule for f in lint(on, head)} == {
        "yamllint-error",
        "yamllint-warning",
    }


def test_a_repository_without_ct_is_not_linted() -> None:
    assert lint(chart(), chart(values=VALUES + "x: yes \n")) == []


def test_a_ct_yaml_that_no_ci_run_uses_says_what_ct_lint_would_as_notices() -> None:
    base = {".github/ct.yaml": "chart-dirs: [charts]\n"} | chart()
    [found] = lint(base, chart(values=VALUES + "x: 1 \n"))
    assert (found.severity, found.rule, found.preexisting) == (
        Severity.NOTICE,
        "yamllint-error",
        False,
    )
    assert found.message.endswith(
        "`ct lint` fails on it (with .github/ct.yaml, which no CI run of `ct lint` uses)."
    )


def test_a_lint_conf_extending_a_repository_file_and_ignoring_from_one() -> None:
    conf = (
        "extends: .github/base-lint.yaml\nignore-from-file: .github/lint-ignore\n"
        "rules:\n  truthy: disable\n"
    )
    files = {
        ".github/lintconf.yaml": conf,
        ".github/base-lint.yaml": "extends: default\nrules:\n  document-start: disable\n",
        ".github/lint-ignore": f"{CHART}/ci/\n",
    }
    base = ci() | files | chart()
    head = chart(values=VALUES + "on: yes\n", **{"ci/x-values.yaml": "a:   1\n"})
    found = lint(base, head)
    # yamllint's default's line-length (80) and trailing spaces, not truthy (disabled), and nothing
    # of the ignored ci/ files.
    assert [(f.path, f.data["yamllint_rule"]) for f in found] == []
    head = chart(values=VALUES + "on: yes\nlong: " + "x" * 80 + "\n")
    found = lint(base, head)
    assert [(f.path, f.line, f.data["yamllint_rule"]) for f in found] == [
        (f"{CHART}/values.yaml", 5, "line-length")
    ]


def test_a_lint_conf_that_is_missing_is_a_notice_and_nothing_is_linted() -> None:
    base = ci(CT_YAML.replace(".github/lintconf.yaml", ".github/nope.yaml")) | chart()
    [found] = lint(base, chart(values=VALUES + "x: 1 \n"))
    assert (found.severity, found.rule, found.message) == (
        Severity.NOTICE,
        "settings",
        ".github/nope.yaml: no such file: not used, and `ct lint` cannot use it either.",
    )


def test_a_deleted_values_file_fails_as_ct_lint_does() -> None:
    head = chart() | {f"{CHART}/values.yaml": None}
    [found] = lint(ci() | chart(), head)
    assert (found.severity, found.rule, found.path) == (
        Severity.FAILURE,
        "missing-file",
        f"{CHART}/values.yaml",
    )


def test_the_command_line_fails_on_a_yamllint_error_in_its_json_report(tmp_path: Path) -> None:
    g = GitBuilder(tmp_path / "repo")
    _lay(g, ci() | chart())
    g.commit("base").branch("pr")
    _lay(g, chart(values=VALUES + "bad:  1\n"))
    g.commit("pr")
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "review", "--repo", str(g.path), "--base", "develop",
         "--head", "pr", "--format", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    report = validated(proc.stdout)
    assert [(f["check"], f["rule"], f["severity"], f["path"], f["line"]) for f in report["findings"]
            if f["check"] == "yaml"] == [
        ("yaml", "yamllint-error", "failure", f"{CHART}/values.yaml", 4)
    ]  # fmt: skip


def test_a_lint_conf_naming_a_file_outside_the_repository_is_not_read() -> None:
    files = {".github/lintconf.yaml": "extends: ../../etc/yamllint.yaml\n"}
    [found] = lint(ci() | files | chart(), chart(values=VALUES + "x: 1 \n"))
    assert (found.severity, found.rule, found.message) == (
        Severity.NOTICE,
        "settings",
        ".github/lintconf.yaml: ../../etc/yamllint.yaml is outside the repository, and is not "
        "read: not used, and `ct lint` cannot use it either.",
    )


def test_a_values_file_past_the_cap_is_not_linted_and_says_so() -> None:
    big = VALUES + "blob: " + "x" * (1024 * 1024) + "  \n"
    [found] = lint(ci() | chart(), chart(values=big))
    assert (found.severity, found.rule, found.path) == (
        Severity.NOTICE,
        "not-linted",
        f"{CHART}/values.yaml",
    )
    assert found.message == (
        f"{CHART}/values.yaml is {len(big):,} bytes, more than the 1,048,576 the review lints "
        "of one file (MAX_LINT_BYTES): yamllint was not run on it."
    )


def test_the_lint_conf_ci_gives_ct_on_its_command_line_wins_over_the_config() -> None:
    makefile = MAKEFILE.replace("$(CT_CONFIG)", "$(CT_CONFIG) --lint-conf .github/relaxed.yaml")
    relaxed = {".github/relaxed.yaml": "extends: relaxed\n"}
    base = ci(makefile=makefile) | relaxed | chart()
    # Not ct.yaml's lint conf (lines of at most 40): yamllint's relaxed one (80, as a warning).
    head = chart(values=VALUES + "long: " + "y" * 40 + " \n")
    found = lint(base, head)
    assert [(f.severity, f.data["yamllint_rule"], f.data["config"]) for f in found] == [
        (Severity.FAILURE, "trailing-spaces", ".github/relaxed.yaml"),
    ]
