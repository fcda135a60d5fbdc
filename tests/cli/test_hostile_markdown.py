"""The worst Markdown line a PR can write costs a review no more than an ordinary line of the same
length, through the command line: a 64 KB line of backticks (cubic for the pattern that read code
spans), of `<a ` in a file a link leads to (quadratic for the HTML anchors), of `[](`, `“`, `[`;
and a PR description of 65,536 backticks. Each review is held to the review of the same PR with an
ordinary line in the same run, a ratio of this process's CPU times (what else the machine runs does
not count); a review past it is stopped by an alarm as it runs (the check then says it crashed),
not waited for."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from bot.cli.main import main
from bot.textlines import MAX_LINE_CHARS
from tests.support.gitbuilder import GitBuilder

LINE = MAX_LINE_CHARS  # the longest line a check reads whole
BODY = 65_536  # GitHub's longest PR description
# A hostile review takes at most this many times the ordinary one (both are mostly git and the
# review's fixed costs, a tenth of a second; a quadratic scan of one 64 KB line alone takes
# minutes, a cubic one hours).
TIMES = 8
PLAIN = "word "
HOSTILE = {
    "backticks": "`",
    "anchor tags": "<a ",
    "link brackets": "[](",
    "curly quotes": "“",
    "brackets": "[",
}


class _Stopped(Exception):
    pass


@contextmanager
def _stopped_after(seconds: float) -> Iterator[None]:
    """Every `seconds` of this process's CPU time, the review is interrupted where it is (a check
    interrupted is a crashed check, and the next slow scan is interrupted again)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Stopped(f"past {seconds:.1f} s of CPU")

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _repo(path: Path, unit: str) -> GitBuilder:
    """develop has docs/target.md, one line of `unit` (a file a link leads to: its anchors are
    read whole); the PR adds a heading and a line of `unit` to docs/guide.md, and a link to the
    target."""
    line = (unit * (LINE // len(unit) + 1))[:LINE]
    g = GitBuilder(path)
    g.write("docs/target.md", f"# Target\n\n{line}\n").write("docs/guide.md", "# Guide\n")
    g.commit("docs").branch("pr")
    added = f"# Guide\n\n## {line}\n\n{line}\n\nSee [the target](target.md#target) #{line}\n"
    return g.write("docs/guide.md", added).commit("more docs")


def _review(g: GitBuilder, tmp: Path, unit: str, limit: float | None) -> tuple[float, Any]:
    body = tmp / "body.md"
    body.write_text("#" + (unit * (BODY // len(unit) + 1))[: BODY - 1])
    out = tmp / "report.json"
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    args += ["--no-open-prs", "--pr-body", str(body), "--format", "json", "--output", str(out)]
    start = time.process_time()
    if limit is None:
        main(args)
    else:
        with _stopped_after(limit):
            main(args)
    return time.process_time() - start, json.loads(out.read_text())


@pytest.mark.parametrize("unit", HOSTILE.values(), ids=HOSTILE.keys())
def test_the_worst_line_costs_what_an_ordinary_one_does(tmp_path: Path, unit: str) -> None:
    plain = _repo(tmp_path / "plain", PLAIN)
    hostile = _repo(tmp_path / "hostile", unit)
    ordinary = min(_review(plain, tmp_path, PLAIN, None)[0] for _ in range(2))
    seconds, report = _review(hostile, tmp_path, unit, TIMES * ordinary)
    crashed = [f["message"] for f in report["findings"] if f["rule"] == "check-crashed"]
    assert crashed == []
    assert seconds < TIMES * ordinary, f"{seconds:.2f} s against {ordinary:.2f} s"


def test_a_line_past_the_cap_is_read_to_it_and_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = (
        GitBuilder(tmp_path / "repo")
        .write("docs/guide.md", "# Guide\n")
        .commit("docs")
        .branch("pr")
    )
    near, far = "[near](guide.md#no-such-near)", "[far](guide.md#no-such-far)"
    line = near + " " + "word " * (LINE // 5) + far
    g.write("docs/guide.md", f"# Guide\n\n{line}\n").commit("a long line")
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr", "--no-open-prs"]
    main([*args, "--explain"])
    out = capsys.readouterr().out
    assert "#no-such-near" in out and "#no-such-far" not in out  # read to the cap, no further
    assert f"docs/guide.md line 3: read to its first {LINE:,} characters only" in out
