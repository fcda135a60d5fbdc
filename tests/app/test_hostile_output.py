"""PR text that tries to speak in the bot's voice: mentions, HTML, images, a forged verdict, bidi
overrides and backticks in names and messages, through what GitHub is sent and through the real
engine and Helm; and GitHub's size limits with many findings."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from bot.engine.review import Engine, ReviewInput
from bot.git.repo import GitRepo
from bot.model.report import ChartSummary, Finding, Report, Severity
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm
from bot.render.probe import AssumedCapabilities
from bot.report.bodies import MAX_OUTPUT_CHARS, SUMMARY_MARKER
from bot.report.inline import inline_comments
from bot.report.markdown import Section, to_markdown
from bot.report.run_layout import check_run_outputs, summary_comment
from checks import REGISTRY
from tests.support.charts import CT_LINT_PATH, CT_LINT_WORKFLOW, chart_files
from tests.support.gitbuilder import GitBuilder
from tests.support.report_schema import validated

ZWJ = "\u200d"
MENTIONS = "@alice @bob"
SAFE_MENTIONS = f"@{ZWJ}alice @{ZWJ}bob"
IMG = "<img src=https://x/t.png>"
VERDICT = "## ✅ chart-review: no findings"
RLO = "\u202e"
IMAGE = "![x](https://x/y)"
SAFE_IMAGE = "![x\\](https://x/y)"
CHART = f"charts/{MENTIONS}"
PATH = f"{CHART}/values`{RLO}.yaml"
SECTIONS = [Section("qos", "QoS")]
NO_DIFF = {"profiles": []}
CHARTS_LINE = (
    f"Charts: `{CHART}` (1.0.0 → 1.0.1 {SAFE_MENTIONS}; profiles eks {SAFE_IMAGE}, default)"
)


def hostile_report(*more: Finding) -> Report:
    finding = Finding(
        "qos",
        Severity.FAILURE,
        title=f"{MENTIONS} {IMAGE}",
        message=f"{IMG}\n{VERDICT}\ncontainer `{MENTIONS}` flips{RLO}",
        chart=CHART,
        profile=f"eks {IMAGE}",
        subject=f"Deployment/{MENTIONS}",
        path=PATH,
        line=3,
    )
    chart = ChartSummary(CHART, "web", "1.0.0", f"1.0.1 {MENTIONS}", (f"eks {IMAGE}", "default"))
    return Report("b" * 40, "a" * 40, "c" * 40, (chart,), (finding, *more), ("qos",))


def test_check_run_summary_and_text_show_pr_text_literally() -> None:
    [out] = check_run_outputs(hostile_report(), SECTIONS)
    # In a table cell the message is one line, so its `##` is mid-line and needs no escape.
    where = "``charts/@alice @bob/values`\\u202e.yaml:3``"  # inside code: no mention
    assert out.name == "chart-review"  # the one run of the default layout
    assert out.summary == (
        f"Compared `{'b' * 12}` → `{'a' * 12}`. {CHARTS_LINE}\n\n"
        "### QoS: 1 failure\n\n"
        "| | chart | profile | finding | where |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"| ❌ | charts/{SAFE_MENTIONS} | eks {SAFE_IMAGE} "
        f"| **{SAFE_MENTIONS} {SAFE_IMAGE}**<br>&lt;img src=https://x/t.png> "
        f"## ✅ chart-review: no findings container `{MENTIONS}` flips\\u202e | {where} |"
    )
    assert out.text == (
        "### QoS\n\n"
        f"#### ❌ {SAFE_MENTIONS} {SAFE_IMAGE} — {where}\n\n"
        f"chart `{CHART}`, profile `eks {IMAGE}`, `Deployment/{MENTIONS}`\n\n"
        "&lt;img src=https://x/t.png>\n"
        "\\## ✅ chart-review: no findings\n"
        f"container `{MENTIONS}` flips\\u202e"
    )


def test_annotations_are_plain_text_and_stay_raw() -> None:
    [out] = check_run_outputs(hostile_report(), SECTIONS)
    [note] = out.annotations
    assert (note.path, note.title) == (PATH, f"{MENTIONS} {IMAGE}")
    assert note.message == (
        f"{IMG}\n{VERDICT}\ncontainer `{MENTIONS}` flips{RLO}\n\n"
        f"(chart `{CHART}`, profile `eks {IMAGE}`, `Deployment/{MENTIONS}`)"
    )


def test_summary_comment_has_one_verdict_ours() -> None:
    assert summary_comment(hostile_report(), SECTIONS) == (
        f"{SUMMARY_MARKER}\n\n"
        "## ❌ chart-review: 1 failure\n\n"
        f"Compared `{'b' * 12}` → `{'a' * 12}`.\n\n"
        f"{CHARTS_LINE}\n\n"
        f"- ❌ QoS: 1 failure — {SAFE_MENTIONS} {SAFE_IMAGE}\n\n"
        "Details and annotations are in the `chart-review` check run.\n"
    )


def test_inline_comment_body_shows_pr_text_literally() -> None:
    [comment] = inline_comments(hostile_report(), {PATH: frozenset({3})}, posted=[])
    assert (comment.path, comment.line) == (PATH, 3)
    assert comment.body == (
        "<!-- chart-review:inline qos -->\n"  # our marker: the check's name, never PR text
        f"❌ **{SAFE_MENTIONS} {SAFE_IMAGE}**\n\n"
        "&lt;img src=https://x/t.png>\n"
        "\\## ✅ chart-review: no findings\n"
        f"container `{MENTIONS}` flips\\u202e\n\n"
        f"<sub>chart `{CHART}`, profile `eks {IMAGE}`, `Deployment/{MENTIONS}`</sub>"
    )


def test_json_stays_raw_data() -> None:
    report = hostile_report()
    # What the engine gives every chart, and the report's schema requires.
    given = {
        "capabilities": AssumedCapabilities("v1.29.0", False, ()).to_json(),
        "diff": NO_DIFF,
        **REGISTRY.empty_chart_data(),
    }
    report = replace(report, charts=tuple(replace(c, extra=given) for c in report.charts))
    [finding] = validated(report.to_json())["findings"]
    assert (finding["title"], finding["chart"]) == (f"{MENTIONS} {IMAGE}", CHART)


def many(count: int, message: str) -> list[Finding]:
    return [
        Finding(
            "qos", Severity.WARNING, f"pod {n} drops", message, chart="web", path="v.yaml", line=n
        )
        for n in range(1, count + 1)
    ]


def test_many_findings_keep_whole_rows_and_say_how_many_were_left_out() -> None:
    findings = many(3000, "x" * 100)
    [out] = check_run_outputs(hostile_report(*findings), SECTIONS)
    for text, block_start in ((out.summary, "| ⚠️ |"), (out.text, "#### ⚠️")):
        assert len(text) <= MAX_OUTPUT_CHARS
        kept, note = text.rsplit("\n\n", 1)
        shown = kept.count(block_start)
        assert 0 < shown < 3000
        left = 3001 - shown - 1  # the hostile finding comes first and is always shown
        assert note == (
            f"… {left:,} more findings not shown; run `chart-review review` for the full report"
        )
    assert "\n\n### QoS: 1 failure, 3000 warnings\n\n| |" in out.summary
    last_row = out.summary.rsplit("\n\n", 1)[0].splitlines()[-1]
    assert last_row.startswith("| ⚠️ | web |") and last_row.endswith("| `v.yaml:" + last_row[-6:])


def test_one_huge_message_is_cut_within_the_limit() -> None:
    [out] = check_run_outputs(hostile_report(*many(1, "y" * 100_000)), SECTIONS)
    assert len(out.summary) <= MAX_OUTPUT_CHARS and len(out.text) <= MAX_OUTPUT_CHARS
    assert out.text.endswith(
        "… 1 more finding not shown; run `chart-review review` for the full report"
    )


# -- through the real engine and Helm -------------------------------------------------------------

CONTAINER = f"{MENTIONS} {IMG} {RLO} `tick"
REQUIRED = f"{MENTIONS} {IMG} {IMAGE}\\n{VERDICT}"  # a Helm `required` message, split in two lines


def hostile_repo(tmp_path: Path) -> GitBuilder:
    """Chart `web` with a hostile container name whose pod drops from Guaranteed to Burstable;
    chart `broken` whose template fails with a hostile `required` message; ct lints both."""
    g = GitBuilder(tmp_path / "repo").write(CT_LINT_PATH, CT_LINT_WORKFLOW)
    files = {**chart_files("web", "web"), **chart_files("broken", "broken")}
    deployment = files["web/templates/deployment.yaml"]
    files["web/templates/deployment.yaml"] = deployment.replace(
        "- name: web", "- name: " + repr(CONTAINER).replace("'", '"')
    )
    for path, text in files.items():
        g.write(path, text)
    g.commit("two charts")
    g.branch("pr").write("web/ci/equal-values.yaml", "{}\n")
    template = '{{ required "' + REQUIRED + '" .Values.x }}\n'
    return g.write("broken/templates/broken.yaml", "b: " + template).commit("hostile")


# A rendered diff's fence, closed only by a fence of its own length: GitHub renders nothing inside
# (no mention, no HTML), so PR text may stand there as it is.
DIFF_FENCE_RE = re.compile(r"^(`{3,})diff\n.*?^\1$", re.S | re.M)


def assert_speaks_only_in_our_voice(markdown: str, verdict_lines: int = 1) -> None:
    markdown = DIFF_FENCE_RE.sub("", markdown)
    assert "@alice" not in markdown and "@bob" not in markdown
    assert "<img" not in markdown and "[x](" not in markdown and RLO not in markdown
    verdicts = [x for x in markdown.splitlines() if x.startswith(("## ✅", "## ❌"))]
    # The broken chart renders on no profile: it is said as not reviewed, in our words.
    assert (
        verdicts
        == ["## ❌ chart-review: 3 failures, 1 warning; not reviewed: broken"][:verdict_lines]
    )


def test_real_review_of_hostile_chart_text(tmp_path: Path) -> None:
    g = hostile_repo(tmp_path)
    engine = Engine(GitRepo(g.path), EmbeddedHelm(), REGISTRY, RenderCache())
    report = engine.review(ReviewInput(base="develop", head="pr")).report
    render = next(f for f in report.findings if f.check == "render")
    qos = next(f for f in report.findings if f.check == "qos")
    assert render.message.endswith(f"{MENTIONS} {IMG} {IMAGE}\n{VERDICT}")  # raw in the report
    assert CONTAINER in qos.data["causes"][0]["text"]

    markdown = to_markdown(report, REGISTRY.sections())
    assert_speaks_only_in_our_voice(markdown)
    safe_required = f"{SAFE_MENTIONS} &lt;img src=https://x/t.png> {SAFE_IMAGE}"
    assert f"{safe_required} ## ✅ chart-review: no findings |" in markdown  # one line in a cell
    assert f"container {SAFE_MENTIONS} &lt;img src=https://x/t.png> \\u202e \\`tick" in markdown

    sections = REGISTRY.sections()
    assert_speaks_only_in_our_voice(summary_comment(report, sections))
    outputs = {out.name: out for out in check_run_outputs(report, sections)}
    for out in outputs.values():
        assert_speaks_only_in_our_voice(out.summary, verdict_lines=0)
        assert_speaks_only_in_our_voice(out.text, verdict_lines=0)
    details = outputs["chart-review"].text
    assert f"{safe_required}\n\\## ✅ chart-review: no findings" in details
