"""Which check runs a review publishes, by the config's `check_runs:` layout: `one` run,
`chart-review`, with a section per check (the default), or `per-check`, a run per check family
(`chart-review/qos`, …, today's names before the one run, for branch protection that requires each);
and where the whole rendered diff goes when the summary comment must cut it: the first run whose
text has room for it after its findings. Pure, as bot/report/bodies.py."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.model.config import ONE_RUN, PER_CHECK, CheckRunLayout, Config
from bot.model.report import Report
from bot.report.bodies import (
    CHECK_RUN_NAME,
    MAX_OUTPUT_CHARS,
    CheckRunOutput,
    families,
    family_output,
    run_name,
)
from bot.report.comment import comment_diff_room, comment_text
from bot.report.diff_section import diff_markdown
from bot.report.markdown import Section
from bot.report.one_run import one_run_output

# Where a comment too small for the rendered diff says the whole of it is.
DIFF_IN_RUN = "in the details of the `{run}` check run"


def layout_of(config: Config | None, fallback: CheckRunLayout = ONE_RUN) -> CheckRunLayout:
    """The config's layout; `fallback` (bot/model/config.py's `layout_of_text`) where it could
    not be read."""
    return config.check_runs if config is not None else fallback


def run_names(
    layout: CheckRunLayout, checks: Iterable[str], config: Config | None = None
) -> list[str]:
    """The runs a review begins before it runs: the one, or one per check the config enables
    (every one of `checks` when the config cannot be read)."""
    if layout != PER_CHECK:
        return [CHECK_RUN_NAME]
    return [run_name(c) for c in checks if config is None or config.enabled(c)]


def check_run_outputs(
    report: Report, sections: Sequence[Section], layout: CheckRunLayout = ONE_RUN
) -> list[CheckRunOutput]:
    """The runs' outputs; when the summary comment must cut the rendered diff, the first run
    whose text has room for all of it carries it whole after its findings."""
    outputs = _outputs(report, sections, layout)
    diff = _diff_cut_from_comment(report, sections, layout)
    home = _diff_home(outputs, diff)
    if home is not None:
        outputs[home] = replace(outputs[home], text=_with_diff(outputs[home].text, diff))
    return outputs


def summary_comment(
    report: Report,
    sections: Sequence[Section],
    diff_elsewhere: str | None = None,
    layout: CheckRunLayout = ONE_RUN,
    footer: str | None = None,
) -> str:
    """The sticky comment. A diff cut to fit says where the whole is: a check run's details when
    one has room, else `diff_elsewhere` (markdown, e.g. the Action's artifact), else the command
    printing it. `footer` replaces where it says the details are (no check run to point at)."""
    whole_at = (
        diff_elsewhere if footer else _whole_diff_at(report, sections, diff_elsewhere, layout)
    )
    return comment_text(report, sections, whole_at, layout, footer)


def _outputs(
    report: Report, sections: Sequence[Section], layout: CheckRunLayout
) -> list[CheckRunOutput]:
    if layout == PER_CHECK:
        return [family_output(s, report) for s in families(report, sections)]
    return [one_run_output(report, sections)]


def _with_diff(text: str, diff: str) -> str:
    return f"{text}\n\n{diff}" if text else diff


def _diff_home(outputs: Sequence[CheckRunOutput], diff: str) -> int | None:
    """The run whose text (65,535 characters, as a comment's body) holds the whole diff section
    besides its own findings; None when there is no diff to place or no run has the room."""
    if not diff:
        return None
    fits = (i for i, o in enumerate(outputs) if len(_with_diff(o.text, diff)) <= MAX_OUTPUT_CHARS)
    return next(fits, None)


def _diff_cut_from_comment(
    report: Report, sections: Sequence[Section], layout: CheckRunLayout
) -> str:
    """The whole diff section when it is longer than the room the summary comment leaves it."""
    whole = diff_markdown(report)
    return whole if len(whole) > comment_diff_room(report, sections, layout) else ""


def _whole_diff_at(
    report: Report, sections: Sequence[Section], elsewhere: str | None, layout: CheckRunLayout
) -> str | None:
    diff = _diff_cut_from_comment(report, sections, layout)
    if not diff:
        return elsewhere  # the comment holds it whole: no note says where
    outputs = _outputs(report, sections, layout)
    home = _diff_home(outputs, diff)
    return DIFF_IN_RUN.format(run=outputs[home].name) if home is not None else elsewhere
