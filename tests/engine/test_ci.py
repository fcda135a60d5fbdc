"""bot/model/ci/: what a repository's CI runs, read from its files at a commit of a real repository,
and what that says of ct's config and its version check."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.git.repo import GitRepo
from bot.git.tree import GitTree
from bot.model.ci.ct_runs import ct_runs
from bot.model.ci.shell import UNKNOWN, commands
from bot.model.ci.tooling import is_guard_name, pages_branch, release_tools, version_guards
from bot.model.ct_config import version_gates
from tests.support.gitbuilder import GitBuilder


def tree_of(g: GitBuilder) -> GitTree:
    repo = GitRepo(g.path)
    return repo.tree(g.sha())


def workflow(*runs: str, on: str = "pull_request", env: str = "") -> str:
    steps = "".join(f"      - run: {r}\n" for r in runs)
    return f"on: {on}\n{env}jobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    return GitBuilder(tmp_path / "r").write("README.md", "charts\n")


# -- shell ------------------------------------------------------------------------------------------


def test_commands_split_on_operators_continuations_and_substitutions() -> None:
    text = (
        "set -e\n"
        'changed=$(ct list-changed --config ct.yaml) && echo "$changed"\n'
        "ct lint \\\n  --charts a,b \\\n  --check-version-increment=false ; helm version\n"
        "if ct lint-and-install --all; then echo ok; fi  # a comment\n"
    )
    found = [(c.line, c.words) for c in commands(text)]
    assert found == [
        (1, ("set", "-e")),
        (2, ("ct", "list-changed", "--config", "ct.yaml")),
        (2, ("echo", UNKNOWN)),
        (3, ("ct", "lint", "--charts", "a,b", "--check-version-increment=false")),
        (3, ("helm", "version")),
        (6, ("ct", "lint-and-install", "--all")),
        (6, ("echo", "ok")),
        (6, ("fi",)),
    ]


def test_variables_come_from_the_environment_and_assignments_before_them() -> None:
    text = 'CFG=lint/ct.yaml\nct lint --config "$CFG" --target-branch ${BRANCH:-main} -x $1\n'
    [ct] = list(commands(text, {"OTHER": "x"}))  # the assignment alone on its line runs nothing
    assert ct.words == (
        "ct", "lint", "--config", "lint/ct.yaml", "--target-branch", "main", "-x", UNKNOWN + "1"
    )  # fmt: skip


# -- ct's runs ------------------------------------------------------------------------------------


def test_ct_in_a_step_a_container_and_before_its_subcommand(g: GitBuilder) -> None:
    g.write(
        ".github/workflows/ci.yaml",
        workflow(
            "docker run --rm -v $PWD:/w quay.io/helmpack/chart-testing:v3 ct lint --all",
            "ct --config ct.yaml list-changed",
            "ct install --charts ${{ matrix.chart }}",
        ),
    ).commit("ci")
    runs = ct_runs(tree_of(g))
    assert [(r.subcommand, dict(r.flags)) for r in runs] == [
        ("lint", {"all": "true"}),
        ("list-changed", {"config": "ct.yaml"}),
        ("install", {"charts": UNKNOWN}),
    ]
    assert runs[0].where == ".github/workflows/ci.yaml line 6"


def test_a_reusable_workflow_runs_with_its_callers_inputs_and_env(g: GitBuilder) -> None:
    g.write(
        ".github/workflows/lint.yaml",
        "on:\n  workflow_call:\n    inputs:\n      increment:\n        default: true\n"
        "env:\n  CT_CHECK_VERSION_INCREMENT: ${{ inputs.increment }}\n"
        "jobs:\n  lint:\n    steps:\n      - run: ct lint\n",
    )
    g.write(
        ".github/workflows/ci.yaml",
        "on: pull_request\njobs:\n  lint:\n    uses: ./.github/workflows/lint.yaml\n"
        "    with:\n      increment: false\n",
    ).commit("ci")
    [run] = ct_runs(tree_of(g))
    assert run.setting("check-version-increment") == "false"
    assert run.ran.step.on == frozenset({"pull_request"})  # the caller's triggers


def test_make_targets_their_prerequisites_and_variables_are_followed(g: GitBuilder) -> None:
    g.write(
        "Makefile",
        "CT ?= ct\nCONFIG := .github/ct.yaml\n.PHONY: lint deps\n"
        "lint: deps\n\t@$(CT) lint --config $(CONFIG) $(EXTRA)\n"
        "deps:\n\t$(MAKE) -C tools build\n",
    )
    g.write("tools/Makefile", "build:\n\tct list-changed --since origin/main\n")
    g.write(".github/workflows/ci.yaml", workflow("make lint EXTRA=--all")).commit("make")
    runs = ct_runs(tree_of(g))
    assert [(r.subcommand, dict(r.flags), r.ran.via) for r in runs] == [
        ("list-changed", {"since": "origin/main"}, ("make deps", "make build")),
        ("lint", {"config": ".github/ct.yaml", "all": "true"}, ("make lint",)),
    ]
    assert runs[1].where == ".github/workflows/ci.yaml line 6, Makefile line 5"


def test_a_script_a_step_runs_is_read_and_what_it_calls(g: GitBuilder) -> None:
    g.write("hack/lint.sh", "#!/bin/bash\nbash ./hack/ct.sh --all\n")
    g.write("hack/ct.sh", 'ct lint "$@" --config hack/ct.yaml\n')
    g.write(".github/workflows/ci.yaml", workflow("./hack/lint.sh")).commit("scripts")
    [run] = ct_runs(tree_of(g))
    assert (run.flags["config"], run.ran.via, run.ran.source) == (
        "hack/ct.yaml",
        ("hack/lint.sh", "hack/ct.sh"),
        "hack/ct.sh",
    )


def test_what_is_followed_is_bounded(g: GitBuilder) -> None:
    # Each script calls itself: followed once, never for ever.
    g.write("loop.sh", "./loop.sh\nct lint\n")
    g.write(".github/workflows/ci.yaml", workflow("./loop.sh")).commit("loop")
    assert [r.subcommand for r in ct_runs(tree_of(g))] == ["lint"]


# -- which charts ct lints, and whether it checks their versions ---------------------------------


def test_version_gates_follow_charts_chart_dirs_and_exclusions(g: GitBuilder) -> None:
    g.write("ct.yaml", "chart-dirs: [charts, stable]\nexcluded-charts: [old]\n")
    g.write("off.yaml", "check-version-increment: false\n")
    g.write(
        ".github/workflows/ci.yaml",
        workflow(
            "ct lint",
            "ct lint --charts stable/old --config off.yaml",
            "ct lint --chart-dirs incubator --check-version-increment=false",
        ),
    ).commit("ci")
    tree = tree_of(g)

    def gates(chart: str) -> list[tuple[bool | None, str]]:
        return [(gate.checks, gate.said_by) for gate in version_gates(tree, chart)]

    assert gates("charts/web") == [(True, "ct.yaml")]
    assert gates("stable/old") == [(False, "`check-version-increment: false` in off.yaml")]
    assert gates("incubator/x") == [(False, "--check-version-increment=false")]
    assert gates("elsewhere/y") == []


def test_a_setting_only_the_run_knows_decides_nothing(g: GitBuilder) -> None:
    g.write(
        ".github/workflows/ci.yaml",
        workflow("ct lint --check-version-increment=${{ vars.CHECK }} --config ${{ env.X }}"),
    ).commit("ci")
    [gate] = version_gates(tree_of(g), "charts/web")
    assert gate.checks is None


# -- release tooling and version guards -----------------------------------------------------------


def test_release_tooling_and_chart_releaser_on_push_only(g: GitBuilder) -> None:
    g.write("release-please-config.json", '{"packages": {"charts/web": {}, "./charts/api": {}}}')
    g.write(
        ".github/workflows/release.yaml",
        "on:\n  push:\n    branches: [main]\njobs:\n  release:\n    steps:\n"
        "      - uses: helm/chart-releaser-action@v1.7.0\n        with:\n"
        "          charts_dir: stable\n          pages_branch: site\n",
    )
    g.write(
        ".github/workflows/manual.yaml",
        "on: workflow_dispatch\njobs:\n  r:\n    steps:\n      - uses: changesets/action@v1\n",
    ).commit("tools")
    tools = release_tools(tree_of(g))
    assert [(t.name, t.paths, t.at_release) for t in tools] == [
        ("release-please", ("charts/web", "charts/api"), True),
        ("changesets", None, True),  # a workflow's step, run by hand
        ("chart-releaser", ("stable",), False),
    ]
    assert tools[0].covers("charts/web") and not tools[0].covers("charts/other")
    assert pages_branch(tree_of(g)) == "site"


def test_a_version_guard_is_a_pull_request_step_named_for_one(g: GitBuilder) -> None:
    assert is_guard_name("Check chart versions are bumped")
    assert is_guard_name("ensure-version-increment")
    assert not is_guard_name("Bump chart version")  # an automation, not a guard
    assert not is_guard_name("Check versions")
    g.write(
        ".github/workflows/pr.yaml",
        "on: pull_request\njobs:\n  checks:\n    steps:\n"
        "      - name: Verify the chart version was bumped\n        run: exit 0\n"
        "      - run: ./scripts/check-version-bump.sh\n",
    )
    g.write(
        ".github/workflows/push.yaml",
        "on: push\njobs:\n  c:\n    steps:\n      - name: Check version bump\n        run: x\n",
    ).commit("guards")
    found = [(v.name, v.where) for v in version_guards(tree_of(g))]
    assert found == [
        ("Verify the chart version was bumped", ".github/workflows/pr.yaml line 6"),
        ("check-version-bump.sh", ".github/workflows/pr.yaml line 7"),
    ]
