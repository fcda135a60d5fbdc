"""The duplicates check on real repositories: open PRs that close the same issue or make the same
edit, reviewed by the real engine."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.context import OpenPR, PullRequestInfo
from bot.model.report import Finding, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

TEMPLATE = "app/templates/deployment.yaml"
CHART = "apiVersion: v2\nname: app\nversion: 1.0.0\n"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-api
spec:
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
%(init)s      containers:
        - name: api
          image: example/api:1
"""
WAIT_FOR_DB = """\
      initContainers:
        - name: wait-for-db
          image: busybox:1.36
          command: ["sh", "-c", "until nc -z db 5432; do sleep 2; done"]
"""
WAIT_FOR_CACHE = """\
      initContainers:
        - name: wait-for-cache
          image: busybox:1.36
          command: ["sh", "-c", "until nc -z cache 6379; do sleep 2; done"]
"""


def deployment(init: str = "") -> str:
    return DEPLOYMENT % {"init": init}


@pytest.fixture
def g(tmp_path: Path) -> GitBuilder:
    g = GitBuilder(tmp_path / "repo")
    g.write("app/Chart.yaml", CHART).write("app/values.yaml", "{}\n")
    g.write(TEMPLATE, deployment()).write("README.md", "charts\n")
    return g.commit("app 1.0.0")


def branch(g: GitBuilder, name: str, files: dict[str, str], message: str = "") -> str:
    g.branch(name, "develop")
    for path, text in files.items():
        g.write(path, text)
    g.commit(message or f"{name}: change").checkout("develop")  # never the same commit
    return g.sha(name)


NO_PR = PullRequestInfo()


def review(g: GitBuilder, others: Sequence[OpenPR], pr: PullRequestInfo = NO_PR) -> list[Finding]:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    inp = ReviewInput(
        base="develop", head="mine", open_prs=tuple(others), pr=pr, only_checks=("duplicates",)
    )
    return engine.review(inp).report.findings_for("duplicates")


@pytest.mark.parametrize(
    "mine, theirs",
    [
        ("Closes #2913", "Fixes: #2913"),
        ("closes acme/backend#2913", "Resolved acme/backend#2913"),
        ("fix https://github.com/acme/backend/issues/2913", "FIXED acme/backend#2913"),
        ("resolve #2913", "close #2913"),
    ],
)
def test_another_pr_closing_the_same_issue_is_a_warning(
    g: GitBuilder, mine: str, theirs: str
) -> None:
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    other = branch(g, "theirs", {"README.md": "charts, documented\n"})
    found = review(
        g,
        [OpenPR(7, other, "theirs", title="Document the chart", body=f"{theirs}\n")],
        PullRequestInfo(number=9, title="Wait for the database", body=f"{mine}\n"),
    )
    issue = "acme/backend#2913" if "acme" in mine else "#2913"
    assert found == [
        Finding(
            check="duplicates",
            severity=Severity.WARNING,
            rule="same-issue",
            title=f"#7 “Document the chart” also closes {issue}",
            message=f"#7 “Document the chart” closes {issue} too. #7 was opened first. One of "
            "the two is likely redundant: compare them before reviewing both.",
            data={
                "pr": 7,
                "ref": "theirs",
                "title": "Document the chart",
                "created_at": None,
                "opened_first": "other",
                "shared": ["issues"],
                "issues": [issue],
                "files": [],
                "hunks": [],
                "objects": [],
                "renders_differ": False,
            },
        )
    ]


def test_the_same_init_container_fourteen_hours_apart_names_both(g: GitBuilder) -> None:
    """The real case: two PRs both closing the issue and adding the same init container."""
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    other = branch(g, "theirs", {TEMPLATE: deployment(WAIT_FOR_DB)})
    pr = OpenPR(
        21,
        other,
        "theirs",
        title="Add a db wait",
        body="Closes acme/backend#2913",
        created_at="2024-03-04T20:15:00+00:00",
    )
    (found,) = review(g, [pr], PullRequestInfo(number=20, body="Closes acme/backend#2913"))
    assert (found.rule, found.path, found.line, found.chart) == ("same-issue", TEMPLATE, 14, "app")
    assert found.message.startswith(
        "#21 “Add a db wait” closes acme/backend#2913 too and makes the same edit to the same "
        f"lines: {TEMPLATE}: +initContainers: (and 3 more lines) and renders the same change to "
        "Deployment/default/release-api (profile default). This PR was opened first, #21 after it."
    )
    assert found.data["shared"] == ["issues", "hunks", "objects"]
    assert found.data["hunks"] == [
        {"path": TEMPLATE, "removed": (), "added": tuple(WAIT_FOR_DB.splitlines())}
    ]
    assert found.data["created_at"] == "2024-03-04T20:15:00+00:00"


def test_the_same_change_without_a_shared_issue(g: GitBuilder) -> None:
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    other = branch(g, "theirs", {TEMPLATE: deployment(WAIT_FOR_DB)})
    unrelated = branch(g, "elsewhere", {TEMPLATE: deployment(WAIT_FOR_CACHE)})
    others = [OpenPR(3, other, "theirs", title="db"), OpenPR(4, unrelated, "elsewhere")]
    (found,) = review(g, others, PullRequestInfo(body="Closes #1"))
    assert (found.rule, found.title, found.path, found.line) == (
        "same-change",
        f"#3 “db” makes the same change to {TEMPLATE}",
        TEMPLATE,
        14,
    )
    assert found.data["opened_first"] is None  # this PR's number is not known
    assert found.data["issues"] == []


def test_the_same_edit_on_a_later_develop_is_still_the_same_change(g: GitBuilder) -> None:
    """The other PR branched after develop moved: its lines are numbered differently."""
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    g.write(TEMPLATE, "# the API\n# and its pods\n" + deployment()).commit("a header")
    other = branch(g, "theirs", {TEMPLATE: "# the API\n# and its pods\n" + deployment(WAIT_FOR_DB)})
    assert [f.rule for f in review(g, [OpenPR(3, other, "theirs")])] == ["same-change"]


def test_the_same_line_rewritten_in_another_place_is_no_shared_change(g: GitBuilder) -> None:
    """Found on a public repository (issue 38): two PRs each renamed a test's local variable, in
    two different tests of one file; the same removed and added line, not the same change."""
    tests = "".join(
        f'@test "{name}" {{\n  cd {name}\n  local actual=$(helm template x)\n  [ $actual ]\n}}\n'
        for name in ("readiness", "license")
    )
    g.write("app/tests/unit.bats", tests).commit("tests")
    first, second = tests.split('@test "license"')
    renamed_first = first.replace("local actual=", "local object=")
    renamed_second = second.replace("local actual=", "local object=")
    branch(g, "mine", {"app/tests/unit.bats": renamed_first + '@test "license"' + second})
    other = branch(g, "theirs", {"app/tests/unit.bats": first + '@test "license"' + renamed_second})
    assert review(g, [OpenPR(3, other, "theirs")]) == []
    same = branch(g, "same", {"app/tests/unit.bats": renamed_first + '@test "license"' + second})
    assert [f.rule for f in review(g, [OpenPR(4, same, "same")])] == ["same-change"]


def test_a_pr_that_only_mentions_the_issue_is_no_duplicate(g: GitBuilder) -> None:
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    other = branch(g, "theirs", {"README.md": "charts, documented\n"})
    others = [
        OpenPR(7, other, "theirs", body="see #12; related to #12\n<!-- Fixes #12 -->"),
        OpenPR(8, other, "theirs", title="Closes #13"),
    ]
    assert review(g, others, PullRequestInfo(title="Fixes #12")) == []


def test_a_pr_stacked_on_this_one_carries_its_hunks_without_duplicating(g: GitBuilder) -> None:
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    g.branch("stacked", "mine").write("README.md", "charts, documented\n").commit("more")
    g.checkout("develop")
    assert review(g, [OpenPR(5, g.sha("stacked"), "stacked")]) == []


def test_a_shared_version_bump_alone_is_the_version_check_s_business(g: GitBuilder) -> None:
    bumped = CHART.replace("1.0.0", "1.0.1")
    branch(g, "mine", {"app/Chart.yaml": bumped, TEMPLATE: deployment(WAIT_FOR_DB)})
    other = branch(g, "theirs", {"app/Chart.yaml": bumped, TEMPLATE: deployment(WAIT_FOR_CACHE)})
    assert review(g, [OpenPR(3, other, "theirs")]) == []


def test_rendered_examples_that_only_echo_the_same_bump_are_no_duplicate(g: GitBuilder) -> None:
    """As in a real chart repository: every PR that bumps the chart regenerates its committed
    `examples/*/rendered/` files, whose chart labels then change alike in all of them."""
    example = (
        "metadata:\n  labels:\n    helm.sh/chart: app-{v}\n    app.kubernetes.io/version: {v}\n"
    )
    g.write("app/examples/basic/rendered/deployment.yaml", example.format(v="1.0.0")).commit("ex")
    bumped = CHART.replace("1.0.0", "1.1.0")
    regenerated = example.format(v="1.1.0")
    mine = {"app/Chart.yaml": bumped, TEMPLATE: deployment(WAIT_FOR_DB)}
    theirs = {"app/Chart.yaml": bumped, TEMPLATE: deployment(WAIT_FOR_CACHE)}
    for files in (mine, theirs):
        files["app/examples/basic/rendered/deployment.yaml"] = regenerated
    branch(g, "mine", mine)
    other = branch(g, "theirs", theirs)
    assert review(g, [OpenPR(3, other, "theirs")]) == []
    # The same echo beside a real shared edit: the edit is what the finding names.
    theirs[TEMPLATE] = deployment(WAIT_FOR_DB)
    g.run_git("branch", "-D", "theirs")
    other = branch(g, "theirs", theirs)
    (finding,) = review(g, [OpenPR(3, other, "theirs")])
    assert finding.data["files"] == [TEMPLATE]


def test_without_a_body_this_pr_closes_what_its_commits_say(g: GitBuilder) -> None:
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)}, message="Wait for the db\n\nFixes #40")
    other = branch(g, "theirs", {"README.md": "x\n"})
    found = review(g, [OpenPR(3, other, "theirs", body="Closes #40")])
    assert [(f.rule, f.data["issues"]) for f in found] == [("same-issue", ["#40"])]


def test_a_shared_checksum_line_alone_is_no_duplicate(g: GitBuilder) -> None:
    """`checksum/config` is derived from a ConfigMap: two different changes can move it alike in
    a committed rendered example; it is the diff's noise, and no evidence of the same change."""
    example = "metadata:\n  annotations:\n    checksum/config: {sum}\n"
    g.write("app/examples/basic/rendered/deployment.yaml", example.format(sum="aaa")).commit("ex")
    mine = {TEMPLATE: deployment(WAIT_FOR_DB)}
    theirs = {TEMPLATE: deployment(WAIT_FOR_CACHE)}
    for files in (mine, theirs):
        files["app/examples/basic/rendered/deployment.yaml"] = example.format(sum="bbb")
    branch(g, "mine", mine)
    other = branch(g, "theirs", theirs)
    assert review(g, [OpenPR(3, other, "theirs")]) == []


def test_with_no_open_pr_no_hunk_of_the_change_is_read(
    g: GitBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A replay or a command-line run has no open PR: diffing the PR's files for hunks there was
    # ~8 ms of difflib a change, for nothing to compare them with.
    duplicates = importlib.import_module("checks.duplicates.check")
    read: list[str] = []
    real = duplicates.hunks
    monkeypatch.setattr(
        duplicates, "hunks", lambda path, *a, **k: read.append(path) or real(path, *a, **k)
    )
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    assert review(g, []) == []
    assert read == []
    other = branch(g, "theirs", {TEMPLATE: deployment(WAIT_FOR_DB)})
    assert review(g, [OpenPR(7, other, "theirs", title="db")]) != []
    assert read  # with one, the change's hunks are read and compared


def test_other_prs_bodies_are_read_only_where_they_name_an_issue_this_pr_closes(
    g: GitBuilder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hundreds of open PRs' bodies cost a review nothing where this PR closes no issue, and only
    the bodies naming one of its issues' numbers are read for closing keywords."""
    check = importlib.import_module("checks.duplicates.check")
    read: list[str] = []
    closing = check.closing_issues

    def counting(text: str, *rest: str) -> frozenset[object]:
        read.append(text)
        return closing(text, *rest)

    monkeypatch.setattr(check, "closing_issues", counting)
    branch(g, "mine", {TEMPLATE: deployment(WAIT_FOR_DB)})
    others = [
        OpenPR(n, branch(g, f"pr{n}", {"README.md": f"docs {n}\n"}), f"pr{n}", body=body)
        for n, body in ((3, "Fixes #2913"), (4, "Fixes #77"), (5, "Closes #2913 too"))
    ]
    assert review(g, others, PullRequestInfo(number=9, body="Waits for the database")) == []
    assert read == ["", "Waits for the database"]  # this PR's own title and body alone
    read.clear()
    found = review(g, others, PullRequestInfo(number=9, body="Fixes #2913"))
    assert [f.data["pr"] for f in found] == [3, 5]
    assert read[2:] == ["\nFixes #2913", "\nCloses #2913 too"]  # #4 names no number of this PR's
