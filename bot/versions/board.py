"""The release board: every open PR's chart-version claim and its status, per chart, computed at
once from develop's tip. Pure over a `GitView`; the CLI prints it and the App will post it.

Each row's status is `bot.versions.claims.verdict`, the same function behind the `version` check."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import semver

from bot.charts.selection import reviewable_dirs
from bot.git.objects import GitView
from bot.model.chart_files import ChartMeta, read_chart_meta
from bot.model.context import OpenPR
from bot.model.ct_config import NO_CT, CtConfigError, load_ct_config
from bot.model.markdown_safe import cell, code, inline
from bot.versions.claims import Claim, Status, Verdict, open_claims, pr_label, rivals_of, verdict
from bot.versions.semver import parse_version

BOARD_SCHEMA = 1

STATUS_TEXT = {
    Status.OK: "ok",
    Status.NO_BUMP_NEEDED: "no bump needed",
    Status.MISSING_BUMP: "missing bump",
    Status.INVALID: "invalid version",
    Status.NOT_GREATER: "not greater than base",
    Status.TAKEN: "taken by {branch}",
    Status.REMOVED: "removes the chart",
}
# The merge queue top to bottom: mergeable claims in version order, then what needs a new version,
# then what needs no release at all.
QUEUE_ORDER = (
    Status.OK,
    Status.RACE,
    Status.TAKEN,
    Status.NOT_GREATER,
    Status.INVALID,
    Status.MISSING_BUMP,
    Status.NO_BUMP_NEEDED,
    Status.REMOVED,
)
_LOWEST = semver.Version(0, 0, 0)


@dataclass(frozen=True)
class Row:
    pr: OpenPR
    base_version: str | None
    claimed: str | None
    status: Status
    suggested: str | None
    rivals: tuple[OpenPR, ...] = ()

    def status_text(self, branch: str = "develop") -> str:
        """The status in words; `branch` names the integration branch (`main`, `develop`)."""
        if self.status is Status.RACE:
            return "collides with " + ", ".join(pr_label(pr) for pr in self.rivals)
        return STATUS_TEXT[self.status].format(branch=branch)


@dataclass(frozen=True)
class ChartBoard:
    path: str
    name: str
    develop_version: str | None
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Board:
    develop: str
    charts: tuple[ChartBoard, ...]
    branch: str = "develop"  # the integration branch's name, for the words


def build_board(
    git: GitView,
    develop_sha: str,
    open_prs: Iterable[OpenPR],
    charts: list[str] | None = None,
    ignore: Sequence[str] = (),
    branch: str = "develop",
) -> Board:
    """One table per chart: a row for every open PR that touches it. With `charts` None, every chart
    on develop or added by an open PR, and only those some PR touches. `branch`: the integration
    branch's name, as the board says it."""
    prs = tuple(open_prs)
    develop_tree = git.tree(develop_sha)
    paths = charts if charts is not None else _all_charts(git, develop_sha, prs)
    tables = []
    for path in paths:
        develop = read_chart_meta(develop_tree, path)
        claims = open_claims(git, path, prs, develop_sha, ignore)
        rivals = rivals_of(claims)
        rows = [
            _row(pr, claim, verdict(claim, develop, [r for r in rivals if r.pr != pr]))
            for pr, claim in claims
        ]
        rows = sorted((r for r in rows if r.status is not Status.UNTOUCHED), key=_queue_key)
        if rows or charts is not None:
            name = _chart_name(develop, claims, path)
            version = develop.version if develop else None
            tables.append(ChartBoard(path, name, version, tuple(rows)))
    return Board(develop_sha, tuple(tables), branch)


def _all_charts(git: GitView, develop_sha: str, prs: Sequence[OpenPR]) -> list[str]:
    """The charts on develop and on the open PRs, by the repository's `ct.yaml` at develop when it
    has one (its excluded charts and test fixtures are no releases). The board only informs: a
    `ct.yaml` it cannot read, which the review reports, does not hide the board."""
    develop = git.tree(develop_sha)
    try:
        ct = load_ct_config(develop)
    except CtConfigError:
        ct = NO_CT
    return reviewable_dirs([develop, *(git.tree(pr.head) for pr in prs)], ct)


def _chart_name(
    develop: ChartMeta | None, claims: Sequence[tuple[OpenPR, Claim]], path: str
) -> str:
    metas = [develop, *(claim.head for _, claim in claims)]
    return next((m.name for m in metas if m is not None and m.name), path.rsplit("/", 1)[-1])


def _row(pr: OpenPR, claim: Claim, v: Verdict) -> Row:
    base = claim.base.version if claim.base else None
    head = claim.head.version if claim.head else None
    claimed = None if claim.version_unchanged else head
    return Row(pr, base, claimed, v.status, v.suggested, v.rivals)


def _queue_key(row: Row) -> tuple[int, semver.Version, int, str]:
    version = parse_version(row.claimed) if row.status in (Status.OK, Status.RACE) else None
    return (QUEUE_ORDER.index(row.status), version or _LOWEST, row.pr.number, row.pr.ref)


# -- renderings -----------------------------------------------------------------------------------


def board_markdown(board: Board, link_fmt: str | None = None) -> str:
    """Markdown tables; `link_fmt` (e.g. `https://github.com/o/r/pull/{number}`) links the PRs."""
    out = [f"## Chart versions on {inline(board.branch)} (`{board.develop[:7]}`)", ""]
    if not board.charts:
        out.append("No open PR touches a chart.")
    for chart in board.charts:
        where = f"{inline(chart.name)} ({code(chart.path)})"  # names from Chart.yaml: PR text
        out += [f"### {where}: {inline(board.branch)} at {_cell(chart.develop_version)}", ""]
        if not chart.rows:
            out += ["No open PR touches this chart.", ""]
            continue
        out.append("| PR | branch | base | claims | status | suggested |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for row in chart.rows:
            cells = (
                _pr_cell(row.pr, link_fmt),
                _cell(row.pr.ref),
                _cell(row.base_version),
                _cell(row.claimed),
                _cell(row.status_text(board.branch)),
                _cell(row.suggested),
            )
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _pr_cell(pr: OpenPR, link_fmt: str | None) -> str:
    if not pr.number:
        return "—"
    return f"[#{pr.number}]({link_fmt.format(number=pr.number)})" if link_fmt else f"#{pr.number}"


def _cell(text: str | None) -> str:
    """Branch names and versions come from PRs: neutralised as any PR text in a table cell."""
    return cell(text) if text else "—"


def board_json(board: Board) -> dict[str, Any]:
    """The machine shape, schema 1. A branch without a PR number has `pr: null`."""
    return {
        "schema": BOARD_SCHEMA,
        "develop": board.develop,
        "charts": [
            {
                "path": chart.path,
                "name": chart.name,
                "develop_version": chart.develop_version,
                "rows": [_row_json(row, board.branch) for row in chart.rows],
            }
            for chart in board.charts
        ],
    }


def _row_json(row: Row, branch: str) -> dict[str, Any]:
    return {
        "pr": row.pr.number or None,
        "branch": row.pr.ref or None,
        "head": row.pr.head,
        "base_version": row.base_version,
        "claimed": row.claimed,
        "status": row.status_text(branch),
        "rule": str(row.status),
        "suggested": row.suggested,
        "collides_with": [pr.number or pr.ref for pr in row.rivals],
    }


def board_json_text(board: Board) -> str:
    return json.dumps(board_json(board), indent=2) + "\n"
