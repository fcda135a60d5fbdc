"""`chart-review replay`: what the bot would have said on each change merged into a branch.

Each change is reviewed as the PR it was (bot/git/history.py says how a commit maps to one), with
the branch as it stood just before the change merged as its integration branch, so a version
"taken meanwhile" means taken before this change merged, as its reviewers would have seen it. The
PRs open at the time are not known, so no version race with them is looked for. One engine and one
render cache serve every change: a chart tree and values already rendered are not rendered again."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial

from bot.app.settings import render_limits, render_workers
from bot.charts.profiles import NO_OVERRIDE, ValuesOverride
from bot.charts.resources import Resources, Sizes
from bot.charts.selection import owning_chart
from bot.cli.cache_dir import open_cache
from bot.cli.dependency_args import add_dependency_arguments, fetcher_from
from bot.cli.renderer_args import add_renderer_argument
from bot.cli.replay_report import (
    VERDICT_ICON,
    ReplayRow,
    replay_json,
    replay_markdown,
    summarize,
)
from bot.cli.report_writer import write_output
from bot.cli.values_args import add_values_arguments, override_from
from bot.engine.review import Engine, ReviewInput
from bot.errors import ChartReviewError, UsageError
from bot.git.history import MergedChange, chart_dirs_named, merged_changes
from bot.git.repo import GitRepo
from bot.model.chart_files import find_charts
from bot.model.context import PullRequestInfo
from bot.render.base import Renderer
from bot.render.cache import RenderCache
from bot.render.factory import make_renderer
from checks import REGISTRY

log = logging.getLogger(__name__)
DEFAULT_LAST = 50
# Changes under review at once. A review is Python in this process (git facts, checks) around
# renders in the render processes: while one change's checks run, the next ones' charts render, so
# every core works. Many changes render nothing (their renders are in the shared cache already), so
# with two under way both were often in their checks, the render processes idle: at three, the
# time the replay spends beyond its CPU's worth fell by a tenth (bench/replay_bench.py).
CHANGES_AT_ONCE = 3
# Changes handed to the pool beyond those under way, so that a thread freed by a quick change takes
# the next at once instead of waiting for the oldest, slow one to be yielded (its rows wait, in
# order, with their reports: a bounded few).
CHANGES_QUEUED = CHANGES_AT_ONCE


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="review each change merged into a branch, as the PR it was")
    p.add_argument("--repo", default=".", help="a git repository, bare or not (default: .)")
    p.add_argument("--branch", help="the branch to replay (default: the default branch)")
    span = p.add_mutually_exclusive_group()
    span.add_argument(
        "--last",
        type=int,
        metavar="N",
        help=f"the last N changes that touch a chart (default: {DEFAULT_LAST})",
    )
    span.add_argument(
        "--since", metavar="DATE", help="every change merged since DATE (YYYY-MM-DD, UTC)"
    )
    p.add_argument(
        "--chart",
        action="append",
        default=[],
        metavar="DIR",
        help="only the changes to this chart directory (repeatable)",
    )
    add_values_arguments(p)
    add_dependency_arguments(p)
    add_renderer_argument(p)
    p.add_argument(
        "--format",
        choices=["markdown", "json"],
        default="markdown",
        help="a table for people, or json (schema 1) with every change's whole report",
    )
    p.add_argument("--output", metavar="FILE", help="write the replay here instead of stdout")
    p.add_argument("--cache-dir", metavar="DIR", help="keep renders here between runs")
    p.set_defaults(func=run)


def since_timestamp(text: str) -> int:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--since {text}: not a date (YYYY-MM-DD)") from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def changes_to_replay(repo: GitRepo, args: argparse.Namespace, branch: str) -> list[MergedChange]:
    if args.last is not None and args.last < 1:
        raise UsageError(f"--last {args.last}: must be at least 1")
    since = since_timestamp(args.since) if args.since else None
    tip = repo.resolve(branch)
    if tip is None:
        raise UsageError(f"--branch {branch}: not a branch or commit in {repo.path}")
    entries = repo.first_parent_log(tip, since=since)
    wanted = [c.strip("/") or "." for c in args.chart]
    dirs = wanted or sorted(set(find_charts(repo.tree(tip))) | chart_dirs_named(entries))

    def touches(paths: Sequence[str]) -> bool:
        return any(owning_chart(p, dirs) is not None for p in paths)

    last = args.last if args.last is not None else None if since else DEFAULT_LAST
    return list(merged_changes(entries, repo.refs("refs/pull/*/head"), touches, last))


def review_change(
    engine: Engine,
    change: MergedChange,
    charts: tuple[str, ...],
    values: ValuesOverride = NO_OVERRIDE,
    offline: bool = False,
    rendered_diff: bool = True,
    base_name: str | None = None,
) -> ReplayRow:
    """`base_name`: the replayed branch's name, for messages (each change's base is a commit)."""
    started = time.perf_counter()
    inp = ReviewInput(
        base=change.base,
        base_name=base_name,
        as_of=change.date,
        head=change.head,
        develop=change.base,
        charts=charts,
        pr=PullRequestInfo(title=change.subject),
        values=values,
        offline=offline,
        rendered_diff=rendered_diff,
    )
    try:
        report = engine.review(inp).report
    except ChartReviewError as exc:
        return ReplayRow(change, time.perf_counter() - started, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug on one change must not cost the others
        log.exception("replay of %s failed", change.commit)
        why = f"internal error: {type(exc).__name__}: {exc}"
        return ReplayRow(change, time.perf_counter() - started, error=why)
    return ReplayRow(change, time.perf_counter() - started, report=report)


def reviewed_in_order(
    engine: Engine,
    changes: Sequence[MergedChange],
    charts: tuple[str, ...],
    values: ValuesOverride = NO_OVERRIDE,
    offline: bool = False,
    rendered_diff: bool = True,
    base_name: str | None = None,
) -> Iterator[ReplayRow]:
    """Each change's row, in the order of `changes`, with the next ones already under way. A row's
    `seconds` is its review's wall clock, which overlaps its neighbours'. `rendered_diff`: whether
    the reports hold their charts' rendered diffs (the JSON replay prints them; the table not)."""
    with ThreadPoolExecutor(CHANGES_AT_ONCE, thread_name_prefix="replay") as pool:
        window: deque[Future[ReplayRow]] = deque()
        for change in changes:
            review = partial(
                review_change, engine, change, charts, values, offline, rendered_diff, base_name
            )
            window.append(pool.submit(review))
            if len(window) > CHANGES_AT_ONCE + CHANGES_QUEUED:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


def progress(done: int, total: int, row: ReplayRow) -> None:
    """One line on a terminal, rewritten per change; nothing when stderr is a file or a pipe (a
    CI log or a script), where a line per change is only noise."""
    if not sys.stderr.isatty():
        return
    pr = f" #{row.change.number}" if row.change.number else ""
    line = (
        f"replay [{done}/{total}] {row.change.commit[:12]}{pr} "
        f"{VERDICT_ICON[row.verdict]} {row.verdict} {row.seconds:.2f} s"
    )
    end = "\n" if done == total else ""
    sys.stderr.write(f"\r\x1b[2K{line}{end}")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    values = override_from(args)  # a bad --values or --set exits 2 before any review
    repo = GitRepo(args.repo)
    workers = render_workers()
    renderer = make_renderer(args.renderer, render_limits(), workers)
    if callable(start := getattr(renderer, "start", None)):
        start()  # the render processes load while the history is read
    # The command's pools and memos, shared by the changes reviewed at once, ended with it.
    with Resources(Sizes.for_render_workers(workers)) as resources, resources.active():
        return _replay(args, repo, renderer, values, resources)


def _replay(
    args: argparse.Namespace,
    repo: GitRepo,
    renderer: Renderer,
    values: ValuesOverride,
    resources: Resources,
) -> int:
    branch = args.branch or repo.default_branch() or "HEAD"
    changes = changes_to_replay(repo, args, branch)
    cache = open_cache(args.cache_dir) if args.cache_dir else RenderCache()
    engine = Engine(repo, renderer, REGISTRY, cache, fetcher_from(args), resources=resources)
    charts = tuple(c.strip("/") or "." for c in args.chart)
    started = time.perf_counter()
    rows: list[ReplayRow] = []
    skipped = 0
    as_json = args.format == "json"
    replayed = reviewed_in_order(engine, changes, charts, values, args.offline, as_json, branch)
    for row in replayed:
        if row.report is not None and not row.report.charts:
            skipped += 1  # a path of a chart's, but no chart there to review (ct excludes it)
            continue
        rows.append(row)
        progress(len(rows) + skipped, len(changes), row)
    summary = summarize(rows, skipped, time.perf_counter() - started)
    render = replay_json if as_json else replay_markdown
    write_output(render(rows, summary, str(repo.path), branch), args.output)
    return 0
