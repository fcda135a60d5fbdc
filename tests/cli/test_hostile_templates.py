"""A template line the PR writes costs a review no more than an ordinary line of the same length,
through the command line: a container's `name:` followed by 64 KB of spaces (a lazy pattern tried
the rest of the line at each of them: 94 s) is read as a `name:` with a 64 KB comment is."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from bot.cli.main import main
from bot.textlines import MAX_LINE_CHARS
from tests.cli.test_hostile_markdown import TIMES, _stopped_after
from tests.cli.test_line_numbers import CHART_YAML, TEMPLATE, WEB
from tests.support.gitbuilder import GitBuilder
from tests.support.manifests import shipper


def _repo(path: Path, name: str) -> GitBuilder:
    g = GitBuilder(path)
    g.write("app/Chart.yaml", CHART_YAML).write(TEMPLATE, WEB).commit("web").branch("pr")
    return g.write(TEMPLATE, WEB + shipper(name)).commit("a sidecar").checkout("pr")


def _review(g: GitBuilder, tmp: Path, limit: float | None) -> tuple[float, Any]:
    out = tmp / f"{g.path.name}.json"
    args = ["review", "--repo", str(g.path), "--base", "develop", "--head", "pr"]
    args += ["--no-open-prs", "--format", "json", "--output", str(out)]
    start = time.process_time()
    if limit is None:
        main(args)
    else:
        with _stopped_after(limit):
            main(args)
    return time.process_time() - start, json.loads(out.read_text())


def test_a_name_with_a_long_run_of_spaces_costs_what_a_long_comment_does(tmp_path: Path) -> None:
    pad = MAX_LINE_CHARS - 40
    plain = _repo(tmp_path / "plain", "shipper  # " + "word " * (pad // 5))
    hostile = _repo(tmp_path / "hostile", "shipper" + " " * pad + "x")
    ordinary = min(_review(plain, tmp_path, None)[0] for _ in range(2))
    seconds, report = _review(hostile, tmp_path, TIMES * ordinary)
    assert [f["message"] for f in report["findings"] if f["rule"] == "check-crashed"] == []
    [down] = [f for f in report["findings"] if f["check"] == "qos" and f["rule"] == "downgrade"]
    assert "suggestion" in down["data"], down["data"]
    assert seconds < TIMES * ordinary, f"{seconds:.2f} s against {ordinary:.2f} s"
