"""The rendered diff where reviewers look: in the summary comment, within GitHub's limit, and as
`chart-review review --diff` prints it, on real git repositories and real Helm renders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.rendered_diff import chart_diff
from bot.model.report import Report
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.report.bodies import MAX_COMMENT_CHARS, MAX_OUTPUT_CHARS
from bot.report.comment import comment_diff_room
from bot.report.diff_section import diff_markdown
from bot.report.markdown import to_markdown
from bot.report.run_layout import check_run_outputs, summary_comment
from checks import REGISTRY
from tests.support.gitbuilder import GitBuilder

CHART = "apiVersion: v2\nname: conf\nversion: {version}\n"
# One ConfigMap of LINES lines, each naming the word the values give: changing it changes them all.
LINES = 4000
CONFIG_MAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-conf
data:
  settings: |
{{- range $i := until LINES }}
    line {{ $i }} {{ $.Values.word }}
{{- end }}
""".replace("LINES", str(LINES))
CUT_RE = re.compile(
    r"… ([\d,]+) more lines of the rendered diff left out; the whole diff: "
    r"`chart-review review --base ([0-9a-f]{12}) --head ([0-9a-f]{12}) --diff`"
)
FENCE_RE = re.compile(r"^(`{3,})(diff)?$", re.M)


def write_chart(g: GitBuilder, version: str, word: str, lines: int = LINES) -> GitBuilder:
    g.write("conf/Chart.yaml", CHART.format(version=version))
    g.write("conf/values.yaml", f"word: {word}\n")
    g.write("conf/templates/cm.yaml", CONFIG_MAP.replace(f"until {LINES}", f"until {lines}"))
    return g


@pytest.fixture
def repo(tmp_path: Path) -> GitBuilder:
    return write_chart(GitBuilder(tmp_path / "repo"), "1.0.0", "alpha").commit("conf 1.0.0")


def review(g: GitBuilder) -> Report:
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    return engine.review(ReviewInput(base="develop", head="pr")).report


def test_a_diff_too_big_for_the_comment_is_cut_with_a_note(repo: GitBuilder) -> None:
    """Every line of a 4,000-line ConfigMap changes: ~250,000 characters of diff. The comment keeps
    its verdict, checks and footer, shows whole lines of the diff with every fence and fold closed,
    and says how many lines it left out and what prints them."""
    write_chart(repo.branch("pr"), "1.0.1", "beta").commit("beta")
    report = review(repo)
    diff = chart_diff("conf", report.charts[0].extra)
    assert diff is not None
    total = len(diff.profiles[0].text.splitlines())
    assert total == 3 + 3 + 2 * LINES + 3  # ---, +++ and @@; 3 lines of context; each line twice

    comment = summary_comment(report, REGISTRY.sections())
    assert len(comment) <= MAX_COMMENT_CHARS
    assert comment.startswith("<!-- chart-review:summary -->\n\n## ✅ chart-review: no findings")
    assert comment.endswith("\n\nDetails and annotations are in the `chart-review` check run.\n")
    assert "more characters cut" not in comment  # the diff was fitted, not the comment cut
    (cut,) = CUT_RE.findall(comment)
    assert (cut[1], cut[2]) == (report.base[:12], report.head[:12])
    (opening, closing) = FENCE_RE.findall(comment)
    assert opening == ("```", "diff") and closing == ("```", "")
    shown = comment.split("```diff\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert shown[-1] == "…"
    assert len(shown) - 1 + int(cut[0].replace(",", "")) == total
    assert len(comment) > MAX_COMMENT_CHARS - 1000  # the room was used, not given up
    assert comment.index("</details>") > comment.index("\n```\n")

    # The report for people has no limit: all of it, no note.
    markdown = to_markdown(report, REGISTRY.sections())
    assert diff.profiles[0].text in markdown and not CUT_RE.search(markdown)


def test_a_diff_the_comment_cuts_is_whole_in_a_check_run_s_text(tmp_path: Path) -> None:
    """A diff just too long for the comment's room but within a check run's text: the first run
    carries it whole after its findings, and the comment's cut note sends the reader there."""

    def sized(lines: int) -> Report:
        g = write_chart(GitBuilder(tmp_path / f"r{lines}"), "1.0.0", "alpha", lines).commit("c")
        return review(write_chart(g.branch("pr"), "1.0.1", "beta", lines).commit("beta"))

    # The section grows by the same length per line (four-digit line numbers): aim between the
    # comment's room and a run's limit.
    small, large = sized(1700), sized(1710)
    per_line = (len(diff_markdown(large)) - len(diff_markdown(small))) / 10
    room = comment_diff_room(small, REGISTRY.sections())
    aim = (room + MAX_OUTPUT_CHARS) / 2
    report = sized(1700 + round((aim - len(diff_markdown(small))) / per_line))
    whole = diff_markdown(report)
    assert comment_diff_room(report, REGISTRY.sections()) < len(whole) <= MAX_OUTPUT_CHARS

    outputs = check_run_outputs(report, REGISTRY.sections())
    [one] = outputs
    assert one.name == "chart-review" and one.text == whole  # no finding: the text is the diff
    assert all(whole not in o.text for o in outputs[1:])
    comment = summary_comment(report, REGISTRY.sections())
    assert len(comment) <= MAX_COMMENT_CHARS
    assert re.search(
        r"… [\d,]+ more lines? of the rendered diff left out; the whole diff: in the details of "
        r"the `chart-review` check run\n",
        comment,
    )
    assert not CUT_RE.search(comment)


def test_a_diff_no_run_can_hold_says_where_the_caller_keeps_it(repo: GitBuilder) -> None:
    """~250,000 characters fit in no check run: none carries it, and the comment names the place
    its caller gives (the Action's artifact), or else the command that prints it."""
    write_chart(repo.branch("pr"), "1.0.1", "beta").commit("beta")
    report = review(repo)
    assert all("```diff" not in o.text for o in check_run_outputs(report, REGISTRY.sections()))
    where = "the `chart-review-diff` artifact of this workflow run"
    comment = summary_comment(report, REGISTRY.sections(), diff_elsewhere=where)
    assert re.search(
        rf"more lines of the rendered diff left out; the whole diff: {re.escape(where)}\n", comment
    )
    assert CUT_RE.search(summary_comment(report, REGISTRY.sections()))


SMALL_DIFF = (
    "--- a/ConfigMap/default/release-conf\n+++ b/ConfigMap/default/release-conf\n@@\n"
    " apiVersion: v1\n data:\n   settings: |\n"
    "-    line 0 alpha\n-    line 1 alpha\n+    line 0 beta\n+    line 1 beta\n"
    " kind: ConfigMap\n metadata:\n   name: release-conf\n"
)


@pytest.fixture
def small(tmp_path: Path) -> GitBuilder:
    g = write_chart(GitBuilder(tmp_path / "small"), "1.0.0", "alpha", lines=2).commit("conf")
    return write_chart(g.branch("pr"), "1.0.1", "beta", lines=2).commit("beta")


def test_a_small_diff_is_whole_in_the_comment_before_its_footer(small: GitBuilder) -> None:
    report = review(small)
    comment = summary_comment(report, REGISTRY.sections())
    assert all(SMALL_DIFF not in o.text for o in check_run_outputs(report, REGISTRY.sections()))
    assert comment.endswith(
        "### Rendered diff\n\n**`conf`**: 1 of 1 profile changed\n\n"
        "<details><summary>1 object changed</summary>\n\n"
        f"`default`:\n\n```diff\n{SMALL_DIFF}```\n\n</details>\n\n"
        "Details and annotations are in the `chart-review` check run.\n"
    )


def test_review_diff_prints_the_plain_diff(
    small: GitBuilder, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["review", "--repo", str(small.path), "--base", "develop", "--head", "pr"]
    status = main([*args, "--no-open-prs", "--diff"])
    assert capsys.readouterr().out == f"# conf: default\n{SMALL_DIFF}"
    assert status == 0
