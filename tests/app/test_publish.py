"""What GitHub is sent for a report: check runs, the summary comment, inline comments."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import checks
from bot.model.config import PER_CHECK
from bot.model.report import ChartSummary, Finding, Report, Severity
from bot.report.bodies import (
    MAX_ANNOTATION_TITLE,
    MAX_COMMENT_CHARS,
    MAX_OUTPUT_CHARS,
    SUMMARY_MARKER,
    CheckRunOutput,
    failed_output,
    fit,
)
from bot.report.inline import InlineComment, InlinePlan, PostedComment, inline_comments, inline_plan
from bot.report.markdown import Section
from bot.report.run_layout import check_run_outputs, summary_comment

VALUES = "charts/web/values.yaml"
SECTIONS = [
    Section("render", "Rendering", quiet=True),
    Section("qos", "QoS"),
    Section("version", "Chart version"),
    Section("headings", "Headings"),
]
CUT_RE = re.compile(
    r"\n\n… ([\d,]+) more characters cut; run `chart-review review` for the full report$"
)


def finding(
    check: str = "qos",
    severity: Severity = Severity.FAILURE,
    title: str = "QoS drops to BestEffort",
    path: str | None = None,
    line: int | None = None,
    **extra: Any,
) -> Finding:
    return Finding(check, severity, title, "the limits went away", path=path, line=line, **extra)


def report(
    *findings: Finding, checks_run: Sequence[str] = ("render", "qos", "version", "headings")
) -> Report:
    chart = ChartSummary("charts/web", "web", "1.0.0", "1.0.1", ("default", "eks"))
    return Report("b" * 40, "a" * 40, "c" * 40, (chart,), findings, tuple(checks_run))


def outputs(rep: Report) -> dict[str, CheckRunOutput]:
    return {out.name: out for out in check_run_outputs(rep, SECTIONS, PER_CHECK)}


def test_per_check_one_run_per_check_family_in_the_order_run() -> None:
    rep = report(checks_run=("version", "qos", "headings"))
    assert [o.name for o in check_run_outputs(rep, SECTIONS, PER_CHECK)] == [
        "chart-review/version",
        "chart-review/qos",
        "chart-review/headings",
    ]


def test_conclusion_and_title_per_family() -> None:
    rep = report(
        finding("qos", Severity.FAILURE),
        finding("qos", Severity.NOTICE, "init container changed"),
        finding("qos", Severity.NOTICE, "sidecar changed"),
        finding("version", Severity.WARNING, "appVersion drift"),
        finding("headings", Severity.NOTICE, "heading moved"),
    )
    found = {o.name: (o.conclusion, o.title) for o in check_run_outputs(rep, SECTIONS, PER_CHECK)}
    assert found == {
        "chart-review/qos": ("failure", "1 failure, 2 notices"),
        "chart-review/version": ("neutral", "1 warning"),
        "chart-review/headings": ("success", "1 notice"),
    }


def test_a_family_without_findings_succeeds_with_its_section_as_summary() -> None:
    out = outputs(report())["chart-review/version"]
    assert (out.conclusion, out.title, out.summary, out.text) == (
        "success",
        "no findings",
        "### Chart version: no findings",
        "",
    )
    assert out.annotations == ()


def test_render_run_only_when_rendering_found_something() -> None:
    assert "chart-review/render" not in outputs(report(finding("qos")))
    failed = report(finding("render", title="template failed", path="charts/web/templates/a.yaml"))
    render = outputs(failed)["chart-review/render"]
    assert (render.conclusion, render.title) == ("failure", "1 failure")
    assert render.summary.startswith("### Rendering: 1 failure\n\n| |")
    # First, as in the markdown report: a chart that does not render is the first thing to say.
    assert list(outputs(failed))[0] == "chart-review/render"


def test_annotations_only_for_findings_with_path_and_line() -> None:
    rep = report(
        finding(path=VALUES, line=12, profile="eks", subject="Deployment/web"),
        finding(severity=Severity.WARNING, title="no line", path=VALUES),
        finding(severity=Severity.NOTICE, title="nowhere"),
    )
    [note] = outputs(rep)["chart-review/qos"].annotations
    assert note.to_api() == {
        "path": VALUES,
        "start_line": 12,
        "end_line": 12,
        "annotation_level": "failure",
        "title": "QoS drops to BestEffort",
        "message": "the limits went away\n\n(profile `eks`, `Deployment/web`)",
    }


def test_annotation_level_follows_severity_and_title_is_trimmed() -> None:
    rep = report(
        finding(severity=Severity.WARNING, title="w" * 300, path=VALUES, line=1),
        finding(severity=Severity.NOTICE, path=VALUES, line=2),
    )
    warning, notice = outputs(rep)["chart-review/qos"].annotations
    assert (warning.level, notice.level) == (Severity.WARNING, Severity.NOTICE)
    assert [n.to_api()["annotation_level"] for n in (warning, notice)] == ["warning", "notice"]
    assert len(warning.title) == MAX_ANNOTATION_TITLE
    assert warning.title == "w" * (MAX_ANNOTATION_TITLE - 1) + "…"


def test_text_holds_each_finding_whole() -> None:
    rep = report(finding(path=VALUES, line=3, chart="charts/web", profile="eks"))
    assert outputs(rep)["chart-review/qos"].text == (
        f"#### ❌ QoS drops to BestEffort — `{VALUES}:3`\n\n"
        "chart `charts/web`, profile `eks`\n\n"
        "the limits went away"
    )


def _long_body(findings: Sequence[Finding], data: Mapping[str, Mapping[str, Any]]) -> str:
    return "\n".join(f"| row {i} | {'x' * 90} |" for i in range(1000))


def test_summary_over_the_limit_is_cut_with_a_note_of_how_much() -> None:
    sections = [Section("qos", "QoS", _long_body)]
    full = "### QoS: 1 failure\n\n" + _long_body([], {})
    [out] = check_run_outputs(report(finding(), checks_run=("qos",)), sections, PER_CHECK)

    assert len(full) > MAX_OUTPUT_CHARS
    assert len(out.summary) <= MAX_OUTPUT_CHARS
    cut = CUT_RE.search(out.summary)
    assert cut is not None
    kept = out.summary[: cut.start()]
    assert full.startswith(kept) and kept.endswith("|")  # whole rows only
    assert int(cut.group(1).replace(",", "")) == len(full) - len(kept)


def test_fit_leaves_short_text_alone_and_cuts_to_exactly_the_limit() -> None:
    assert fit("short", 10) == "short"
    cut = fit("y" * 200_000, MAX_OUTPUT_CHARS)
    note = CUT_RE.search(cut)
    assert note is not None and len(cut) == MAX_OUTPUT_CHARS
    assert int(note.group(1).replace(",", "")) == 200_000 - note.start()


def test_failed_output_is_neutral_and_says_it_will_retry() -> None:
    assert failed_output("chart-review/qos", "helm crashed") == CheckRunOutput(
        name="chart-review/qos",
        conclusion="neutral",
        title="could not complete",
        summary="could not complete: helm crashed; will retry on the next event",
        text="",
    )
    assert failed_output("version", "x").name == "chart-review/version"


def test_summary_comment_lists_every_check_with_its_headline() -> None:
    rep = report(
        *(finding(title=f"pod {n} drops") for n in range(5)),
        finding("version", Severity.WARNING, "appVersion drift"),
    )
    assert summary_comment(rep, SECTIONS, layout=PER_CHECK) == (
        f"{SUMMARY_MARKER}\n\n"
        "## ❌ chart-review: 5 failures, 1 warning\n\n"
        f"Compared `{'b' * 12}` → `{'a' * 12}`.\n\n"
        "Charts: `charts/web` (1.0.0 → 1.0.1; profiles default, eks)\n\n"
        "- ❌ QoS (`chart-review/qos`): 5 failures — pod 0 drops; pod 1 drops; pod 2 drops; "
        "and 2 more\n"
        "- ⚠️ Chart version (`chart-review/version`): 1 warning\n"
        "- ✅ No findings: Headings (`chart-review/headings`)\n\n"
        "Details and annotations are in each `chart-review/…` check run.\n"
    )


def test_summary_comment_passes_with_notices_and_names_the_render_run() -> None:
    rep = report(finding(severity=Severity.NOTICE), finding("render", Severity.WARNING, "t"))
    text = summary_comment(rep, checks.REGISTRY.sections(), layout=PER_CHECK)
    assert text.splitlines()[2] == "## ✅ chart-review: 1 warning, 1 notice"
    assert "- ✅ QoS classes (`chart-review/qos`): 1 notice\n" in text
    assert "- ⚠️ Rendering (`chart-review/render`): 1 warning\n" in text


def test_summary_comment_stays_within_the_comment_limit() -> None:
    many = [finding(title="t" * 500) for _ in range(10)]
    checks_run = [f"check{i}" for i in range(2000)]
    rep = report(*many, checks_run=checks_run)
    text = summary_comment(rep, SECTIONS, layout=PER_CHECK)
    assert len(text) <= MAX_COMMENT_CHARS
    assert text.startswith(SUMMARY_MARKER)
    assert CUT_RE.search(text)


CHANGED = {VALUES: frozenset({3, 4}), "charts/web/Chart.yaml": frozenset({5})}


def test_inline_comments_only_on_changed_lines() -> None:
    rep = report(
        finding(path=VALUES, line=3, profile="eks", subject="Deployment/web", rule="downgrade"),
        finding(severity=Severity.WARNING, title="outside", path=VALUES, line=40),
        finding(severity=Severity.NOTICE, title="no line", path=VALUES),
        finding(title="other file", path="charts/web/templates/x.yaml", line=3),
        finding(severity=Severity.NOTICE, title="a notice", path=VALUES, line=4),
    )
    assert inline_comments(rep, CHANGED, posted=[]) == [
        InlineComment(
            VALUES,
            3,
            "<!-- chart-review:inline qos/downgrade -->\n❌ **QoS drops to BestEffort**\n\n"
            "the limits went away\n\n<sub>profile `eks`, `Deployment/web`</sub>",
        )
    ]


def posted(comments: Sequence[InlineComment], start: int = 1) -> list[PostedComment]:
    return [PostedComment(start + i, c.path, c.line, c.body) for i, c in enumerate(comments)]


def test_inline_comments_dedupe_within_the_report_and_against_posted() -> None:
    same = finding(path=VALUES, line=4)
    other = finding(
        severity=Severity.WARNING, title="chart bump", path="charts/web/Chart.yaml", line=5
    )
    rep = report(same, same, other)
    first = inline_comments(rep, CHANGED, posted=[])
    assert [(c.path, c.line) for c in first] == [(VALUES, 4), ("charts/web/Chart.yaml", 5)]
    assert inline_comments(rep, CHANGED, posted=posted(first[:1])) == first[1:]
    assert inline_plan(rep, CHANGED, posted(first)) == InlinePlan((), ())


def test_one_comment_per_line_and_rule_lists_every_profile() -> None:
    """Issue 40: the same downgrade on two profiles from one values line is one comment."""
    eks, aks = (
        finding(path=VALUES, line=3, rule="downgrade", profile=p, subject="Deployment/web")
        for p in ("eks", "aks")
    )
    lint = finding("lint", Severity.WARNING, "lint says", path=VALUES, line=3, rule="warning")
    [qos, linted] = inline_comments(report(eks, aks, lint), CHANGED, posted=[])
    assert (qos.path, qos.line) == (linted.path, linted.line) == (VALUES, 3)
    assert qos.body.startswith("<!-- chart-review:inline qos/downgrade -->\n")
    assert qos.body.endswith("<sub>profile `eks, aks`, `Deployment/web`</sub>")
    assert linted.body.startswith("<!-- chart-review:inline lint/warning -->\n")


def test_a_re_run_edits_the_comment_of_its_line_and_rule_never_posts_it_again() -> None:
    before = finding(path=VALUES, line=3, rule="downgrade", profile="eks")
    [comment] = inline_comments(report(before), CHANGED, posted=[])
    now = replace(before, message="the limits went away, and the requests")
    plan = inline_plan(report(now), CHANGED, posted([comment], start=77))
    assert plan.new == ()
    [(comment_id, body)] = plan.edits
    assert comment_id == 77 and "and the requests" in body


def test_findings_already_at_base_are_folded_in_the_comment_and_the_check_run() -> None:
    at_base = [finding("version", Severity.NOTICE, f"old {n}", preexisting=True) for n in range(8)]
    rep = report(finding(), *at_base)
    comment = summary_comment(rep, SECTIONS, layout=PER_CHECK)
    assert "## ❌ chart-review: 1 failure; 8 already at base\n" in comment
    assert "- ✅ Chart version (`chart-review/version`): no new findings; 8 already at base\n" in (
        comment
    )
    assert "old 0" not in comment  # a count, not the rows
    version = outputs(rep)["chart-review/version"]
    assert (version.conclusion, version.title) == ("success", "no new findings; 8 already at base")
    assert version.summary.startswith(
        "### Chart version: no new findings; 8 already at base\n\n"
        "<details><summary>8 already at base, unchanged</summary>\n\n| chart | profile |"
    )
    assert version.text.startswith(
        "<details><summary>8 already at base, unchanged</summary>\n\n#### ℹ️ old 0"
    )
    assert version.text.endswith("the limits went away\n\n</details>")


def test_a_family_with_nothing_to_say_keeps_its_check_run_but_shares_one_comment_line() -> None:
    rep = report(finding())
    assert [o.name for o in check_run_outputs(rep, SECTIONS, PER_CHECK)] == [
        "chart-review/qos",
        "chart-review/version",
        "chart-review/headings",
    ]
    lines = [
        line
        for line in summary_comment(rep, SECTIONS, layout=PER_CHECK).splitlines()
        if line.startswith("- ")
    ]
    assert lines == [
        "- ❌ QoS (`chart-review/qos`): 1 failure — QoS drops to BestEffort",
        "- ✅ No findings: Chart version (`chart-review/version`), Headings "
        "(`chart-review/headings`)",
    ]


# The default layout: one run, `chart-review`, a section per check.


def test_one_run_by_default_with_a_section_per_check_in_the_order_run() -> None:
    rep = report(
        finding("qos", Severity.FAILURE, path=VALUES, line=3),
        finding(
            "version", Severity.WARNING, "appVersion drift", path="charts/web/Chart.yaml", line=4
        ),
        finding("headings", Severity.NOTICE, "heading moved"),
    )
    [one] = check_run_outputs(rep, SECTIONS)
    assert (one.name, one.conclusion, one.title) == (
        "chart-review",
        "failure",
        "1 failure, 1 warning, 1 notice",
    )
    headings = [line for line in one.summary.splitlines() if line.startswith("### ")]
    assert headings == [
        "### QoS: 1 failure",
        "### Chart version: 1 warning",
        "### Headings: 1 notice",
    ]
    assert one.summary.startswith(f"Compared `{'b' * 12}` → `{'a' * 12}`. Charts: `charts/web`")
    per_check = outputs(rep)
    for name, title in (("qos", "QoS"), ("version", "Chart version"), ("headings", "Headings")):
        # Each section as the family's own run had it, and its findings whole in the text.
        assert per_check[f"chart-review/{name}"].summary in one.summary
        assert f"### {title}\n\n{per_check[f'chart-review/{name}'].text}" in one.text
    assert [n.path for n in one.annotations] == [VALUES, "charts/web/Chart.yaml"]


def test_one_run_s_name_and_sections_stay_whatever_the_review_finds() -> None:
    quiet, loud = report(), report(finding("render", title="template failed"), finding())
    assert [o.name for o in check_run_outputs(quiet, SECTIONS)] == ["chart-review"]
    assert [o.name for o in check_run_outputs(loud, SECTIONS)] == ["chart-review"]
    [calm] = check_run_outputs(quiet, SECTIONS)
    assert (calm.conclusion, calm.title, calm.text) == ("success", "no findings", "")
    assert calm.summary.endswith(
        "### QoS: no findings\n\n### Chart version: no findings\n\n### Headings: no findings"
    )
    [failed] = check_run_outputs(loud, SECTIONS)
    assert "\n\n### Rendering: 1 failure\n\n| |" in failed.summary  # said when it found something


def test_one_long_section_does_not_crowd_the_others_out_of_the_run() -> None:
    rep = report(
        *(finding(title=f"pod {n} drops", path=VALUES, line=n + 1) for n in range(2000)),
        finding("version", Severity.WARNING, "appVersion drift"),
    )
    [one] = check_run_outputs(rep, SECTIONS)
    assert len(one.summary) <= MAX_OUTPUT_CHARS and len(one.text) <= MAX_OUTPUT_CHARS
    assert "### Chart version: 1 warning\n\n| | chart |" in one.summary
    assert "| ⚠️ |  |  | **appVersion drift**" in one.summary
    assert "### Headings: no findings" in one.summary
    assert "#### ⚠️ appVersion drift" in one.text
    assert "more findings not shown; run `chart-review review` for the full report" in one.text
    assert len(one.annotations) == 2000  # all of them, sent 50 a request


def test_shares_give_small_parts_all_they_want_and_split_the_rest() -> None:
    from bot.report.one_run import shares

    assert shares([10, 20], 100) == [10, 20]
    assert shares([10, 500, 900], 300) == [10, 145, 145]
    assert shares([], 10) == []
    assert sum(shares([7, 7, 7], 10)) <= 10


def test_the_summary_comment_of_the_one_run_names_no_family_run() -> None:
    rep = report(finding(title="pod drops"), finding("version", Severity.WARNING, "drift"))
    lines = summary_comment(rep, SECTIONS).splitlines()
    assert [line for line in lines if line.startswith("- ")] == [
        "- ❌ QoS: 1 failure — pod drops",
        "- ⚠️ Chart version: 1 warning",
        "- ✅ No findings: Headings",
    ]
    assert lines[-1] == "Details and annotations are in the `chart-review` check run."
