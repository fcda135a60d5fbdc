"""`chart-review`: the command line. Exit 0 no failure, 1 a failure finding, 2 the tool could not run
(bad arguments or input, said in one line), 3 an internal error (a bug: the traceback is logged)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import bot
from bot.app.settings import render_limits, render_workers
from bot.charts.resources import Pool, Resources, Sizes
from bot.cli import action_args as action_cli
from bot.cli import list_changed as list_changed_cli
from bot.cli import qos as qos_cli
from bot.cli import render_cmd as render_cli
from bot.cli import replay as replay_cli
from bot.cli import versions as versions_cli
from bot.cli.cache_dir import open_cache
from bot.cli.dependency_args import add_dependency_arguments, fetcher_from
from bot.cli.links import local_resolver, parse_link
from bot.cli.open_prs import (
    add_discovery_arguments,
    discover_open_prs,
    discovery_from,
    finding_open_prs,
    head_number,
)
from bot.cli.progress import chart_progress
from bot.cli.renderer_args import add_renderer_argument
from bot.cli.report_writer import ReportWriter
from bot.cli.values_args import add_values_arguments, override_from
from bot.engine.publisher import Publisher
from bot.engine.review import Engine, ReviewInput
from bot.errors import ChartReviewError, UsageError
from bot.git.refs import integration_branch
from bot.git.repo import GitRepo
from bot.git.repo import close_all as close_repositories
from bot.kube.capabilities import parse_api_versions, parse_kube_version
from bot.model.config import CONFIG_PATH, parse_config
from bot.model.context import PullRequestInfo
from bot.model.ct_config import load_ct_config
from bot.render.cache import RenderCache
from bot.render.factory import make_renderer
from bot.render.sandbox import SandboxedHelm
from bot.report.exit_status import (
    EXIT_ERROR,
    EXIT_INTERNAL,
    FAIL_ON,
    exit_status,
)
from bot.report.sarif import category
from bot.report.text import FORMATS
from bot.review_process import tune_for_reviews
from checks import REGISTRY

# The top-level modules of pyproject.toml's `app` extra: what `serve` and `worker` need beyond
# the command line's packages.
APP_EXTRA = frozenset({"fastapi", "uvicorn", "huey", "prometheus_client", "redis"})
APP_EXTRA_INSTALL = "pip install 'chart-review-bot[app]'"
PROG = "chart-review"
INTERNAL_ERROR = "internal error, please report it with the traceback above: {error}"
EPILOG = (
    "Exit status: 0 no failure finding, 1 at least one (what counts is --fail-on's), 2 the tool "
    "could not run (bad arguments or input, said in one line), 3 an internal error (a bug)."
)


class _Version(argparse.Action):
    """`--version`, the installed release read only when asked (bot/__init__.py)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> NoReturn:
        print(f"{PROG} {bot.__version__}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return EXIT_ERROR


def add_review(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "review", help="review a head commit against a base on a local git repository"
    )
    p.add_argument("--repo", default=".", help="a git repository, bare or not (default: .)")
    p.add_argument("--base", required=True, help="the branch or commit the PR targets")
    p.add_argument("--head", required=True, help="the PR's head branch or commit")
    p.add_argument(
        "--chart",
        action="append",
        default=[],
        metavar="DIR",
        help="review only this chart directory (repeatable)",
    )
    p.add_argument(
        "--all-charts",
        action="store_true",
        help="review every chart, not only the ones the diff touches",
    )
    p.add_argument(
        "--profile",
        action="append",
        default=[],
        metavar="NAME",
        help="render only this profile (repeatable)",
    )
    p.add_argument(
        "--develop",
        help="the integration branch (default: develop if it exists, else the default branch)",
    )
    p.add_argument("--release-name", help="release name to render with (default: release)")
    p.add_argument("--namespace", help="namespace to render into (default: default)")
    p.add_argument(
        "--kube-version",
        metavar="V",
        help="the Kubernetes version to render for, as helm template's (default: the config's "
        "kube_version, else Helm's own)",
    )
    p.add_argument(
        "--api-versions",
        action="append",
        default=[],
        metavar="LIST",
        help="API versions .Capabilities.APIVersions has, besides Helm's and the charts' CRDs "
        "(repeatable, comma-separated; replaces the config's api_versions)",
    )
    add_values_arguments(p)
    add_dependency_arguments(p)
    add_renderer_argument(p)
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="markdown for people, json (schema 1), sarif (2.1.0, for code scanning) or github "
        "(workflow-command annotations) (default: rendered on a terminal, else markdown)",
    )
    p.add_argument("--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the rendered diff (per chart, profile and object) instead of the report; "
        "the exit status is still the review's",
    )
    p.add_argument(
        "--fail-on",
        choices=list(FAIL_ON),
        default="failure",
        help="exit 1 on a failure finding (default), on a warning or failure, or never",
    )
    p.add_argument("--cache-dir", metavar="DIR", help="keep renders here between runs")
    p.add_argument(
        "--explain", action="store_true", help="also say what the checks considered and left alone"
    )
    p.add_argument(
        "--open-pr",
        action="append",
        default=[],
        metavar="NUMBER=REF",
        help="another open PR (repeatable); replaces discovery from refs/pull/*/head or branches",
    )
    add_discovery_arguments(p)
    p.add_argument(
        "--link",
        action="append",
        default=[],
        metavar="OWNER/NAME=PATH[@REF]",
        help="read repository OWNER/NAME from a local git repository (repeatable)",
    )
    p.add_argument("--pr-title", default="", help="the PR's title, for the references it quotes")
    p.add_argument(
        "--pr-body", metavar="FILE", help="a file holding the PR's description ('-' for stdin)"
    )
    p.set_defaults(func=run_review)


def review_input(args: argparse.Namespace, repo: GitRepo, finding: Pool) -> ReviewInput:
    """The review asked for; the open PRs, unless given, are found in `finding` meanwhile."""
    develop_sha = develop_commit(repo, args.develop, args.base)
    head, number, rules = repo.resolve(args.head), head_number(args.head), discovery_from(args)
    # `--open-pr` is read now, so that a malformed one stops the review before it renders.
    open_prs = (
        discover_open_prs(repo, develop_sha, args.open_pr, head, rules=rules, exclude_number=number)
        if develop_sha and args.open_pr
        else ()
    )
    found = (
        finding_open_prs(repo, develop_sha, head, finding, rules=rules, exclude_number=number)
        if develop_sha and not args.open_pr
        else None
    )
    links = dict((name, (path, ref)) for name, path, ref in (parse_link(arg) for arg in args.link))
    return ReviewInput(
        open_prs=open_prs,
        open_prs_found=found,
        links=local_resolver(links, rules),
        pr=PullRequestInfo(
            number=head_number(args.head), title=args.pr_title, body=read_pr_body(args.pr_body)
        ),
        base=args.base,
        head=args.head,
        develop=args.develop,
        charts=tuple(args.chart),
        all_charts=args.all_charts,
        profiles=tuple(args.profile),
        release_name=args.release_name,
        namespace=args.namespace,
        kube_version=(
            parse_kube_version(args.kube_version, "--kube-version") if args.kube_version else None
        ),
        api_versions=parse_api_versions(args.api_versions, "--api-versions"),
        values=override_from(args),
        offline=args.offline,
        progress=chart_progress,
    )


def develop_commit(repo: GitRepo, requested: str | None, base: str) -> str | None:
    """The integration branch the open PRs are measured against: the one asked for, which must
    exist, else the one the config (or ct.yaml's target-branch) at the PR's base names, as the
    engine decides (bot/git/refs.py)."""
    if requested:
        sha = repo.resolve(requested)
        if sha is None:
            raise UsageError(f"--develop '{requested}' is not a commit in {repo.path}")
        return sha
    target = repo.resolve(base)
    if target is None:
        found = integration_branch(repo)
        return found.sha if found else None
    tree = repo.tree(target)
    config = parse_config(tree.text(CONFIG_PATH), known_checks=REGISTRY.options)
    ct = load_ct_config(tree)
    found = integration_branch(repo, config.develop, target_refs=ct.target_refs)
    return found.sha if found else None


def read_pr_body(source: str | None) -> str:
    if source is None:
        return ""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(errors="replace")
    except OSError as exc:
        raise UsageError(f"--pr-body {source}: {exc.strerror}") from None


def run_review(args: argparse.Namespace) -> int:
    repo = GitRepo(args.repo)
    cache = open_cache(args.cache_dir) if args.cache_dir else RenderCache()
    workers = render_workers()
    renderer = make_renderer(args.renderer, render_limits(), workers)
    if isinstance(renderer, SandboxedHelm):
        # Its processes load Python and Helm (~0.2 s each) while this one reads git.
        renderer.start()
    # The command's pools and memos: the discovery of open PRs shares the review's memos.
    with Resources(Sizes.for_render_workers(workers)) as resources, resources.active():
        engine = Engine(repo, renderer, REGISTRY, cache, fetcher_from(args), resources=resources)
        inp = review_input(args, repo, resources.pools.open_prs)
        result = engine.review(inp, explain=args.explain)
    writer: Publisher = ReportWriter(
        args.format,
        REGISTRY.sections(),
        args.output,
        args.explain,
        diff=args.diff,
        sarif_category=category(args.chart, args.profile),
    )
    writer.publish(result)
    return exit_status(result.report, args.fail_on)


def add_demo(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="build a throwaway repository from examples/ and review its PRs"
    )
    p.add_argument("--keep", metavar="DIR", help="build the demo repository here and keep it")
    p.add_argument(
        "--format",
        choices=["markdown", "json"],
        default=None,
        help="markdown or json (schema 1) for each PR (default: rendered on a terminal, a "
        "screenful per scenario, else markdown)",
    )
    p.set_defaults(func=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    from bot.cli.demo import run

    return run(keep=args.keep, fmt=args.format, registry=REGISTRY)


def add_app(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve", help="run the GitHub App: webhook receiver and, by default, a worker"
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default: 127.0.0.1)"
    )
    p.add_argument("--port", type=int, default=8000, help="the port to listen on (default: 8000)")
    p.add_argument(
        "--fd",
        type=int,
        metavar="N",
        help="serve on this already-bound listening socket instead (socket activation)",
    )
    p.add_argument(
        "--no-worker",
        action="store_true",
        help="only receive webhooks; `chart-review worker` processes run the jobs",
    )
    p.set_defaults(func=run_serve)
    w = sub.add_parser("worker", help="run queued reviews (beside `serve --no-worker`)")
    w.set_defaults(func=run_worker)


def run_serve(args: argparse.Namespace) -> int:
    serve = _app_server().serve
    return int(serve(args.host, args.port, with_worker=not args.no_worker, fd=args.fd))


def run_worker(args: argparse.Namespace) -> int:
    return int(_app_server().worker())


def _app_server() -> ModuleType:
    """bot/cli/serve.py, imported only here: the App's stack is the `app` extra's, which the
    command line and the Action do without."""
    try:
        from bot.cli import serve
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing not in APP_EXTRA:
            raise
        raise UsageError(
            f"`serve` and `worker` run the App, whose packages are the `app` extra, and "
            f"{missing} is not installed: {APP_EXTRA_INSTALL}"
        ) from None
    return serve


def build_parser() -> Parser:
    parser = Parser(
        prog=PROG, description="Review pull requests to Helm chart repositories.", epilog=EPILOG
    )
    parser.add_argument("--version", action=_Version, nargs=0, help="print the release and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_review(sub)
    qos_cli.add_parser(sub)
    versions_cli.add_parser(sub)
    replay_cli.add_parser(sub)
    render_cli.add_parser(sub)
    list_changed_cli.add_parser(sub)
    add_demo(sub)
    add_app(sub)
    action_cli.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    tune_for_reviews()
    try:
        args = build_parser().parse_args(argv)
        try:
            return int(args.func(args))
        finally:
            # Every git process the command started ends and is reaped here, not left behind.
            close_repositories()
    except ChartReviewError as exc:
        return fail(str(exc))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug: say so, never pass it off as a usage error
        traceback.print_exc()  # to stderr whatever logging is set up: the report needs it
        print(
            f"{PROG}: {INTERNAL_ERROR.format(error=f'{type(exc).__name__}: {exc}')}",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
