"""`chart-review render`: what the bot rendered for one chart, profile and commit, printed as
`helm template` prints it, so that a user can see what the checks looked at and trust it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

import yaml

from bot.app.settings import render_limits
from bot.charts.fetching import ReviewFetch
from bot.charts.profiles import NO_OVERRIDE, ValuesOverride, discover_profiles
from bot.charts.renders import ChartSource, RenderSettings, render_chart
from bot.charts.resources import Resources
from bot.cli.dependency_args import add_dependency_arguments, fetcher_from
from bot.cli.renderer_args import add_renderer_argument
from bot.cli.values_args import add_values_arguments, override_from
from bot.errors import UsageError
from bot.git.repo import GitRepo
from bot.git.tree import GitTree
from bot.kube.capabilities import Capabilities, parse_api_versions, parse_kube_version
from bot.model.chart_files import chart_file
from bot.model.config import CONFIG_PATH, Config, parse_config
from bot.model.context import Rendered
from bot.model.manifests import Document
from bot.render.cache import RenderCache
from bot.render.factory import make_renderer
from checks import REGISTRY

HELP = "print what the bot renders for a chart and profile at a commit, as helm template does"
EXIT_OK, EXIT_RENDER_FAILED = 0, 1
# The engine's defaults when neither the command line nor the config names them (bot/engine/review.py).
DEFAULT_RELEASE, DEFAULT_NAMESPACE = "release", "default"


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("render", help=HELP, description=HELP)
    p.add_argument("--repo", default=".", help="a git repository, bare or not (default: .)")
    p.add_argument("--ref", required=True, help="the branch or commit to render")
    p.add_argument("--chart", required=True, metavar="DIR", help="the chart directory")
    p.add_argument(
        "--profile", metavar="NAME", help="the profile to render (needed when it has several)"
    )
    p.add_argument("--release-name", help="release name to render with (default: release)")
    p.add_argument("--namespace", help="namespace to render into (default: default)")
    p.add_argument("--kube-version", metavar="V", help="as for review")
    p.add_argument(
        "--api-versions", action="append", default=[], metavar="LIST", help="as for review"
    )
    add_values_arguments(p)
    add_dependency_arguments(p)
    add_renderer_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    override = override_from(args)  # a bad --values or --set exits 2 before any git or Helm work
    repo = GitRepo(args.repo)
    try:
        sha = repo.resolve(args.ref)
        if sha is None:
            raise UsageError(f"--ref '{args.ref}' is not a commit in {repo.path}")
        rendered = render_one(repo, repo.tree(sha), args, override)
    finally:
        repo.close()
    if rendered.error is not None:
        e = rendered.error
        # Helm's message names the template and line itself, most of the time.
        detail = (
            e.message if not e.template or e.template in e.message else f"{e.template}: {e.message}"
        )
        chart = f"{args.chart} does not render on profile {rendered.profile}"
        print(f"chart-review: {chart}: {detail}", file=sys.stderr)
        return EXIT_RENDER_FAILED
    sys.stdout.write(helm_template_text(rendered.documents))
    return EXIT_OK


def render_one(
    repo: GitRepo,
    tree: GitTree,
    args: argparse.Namespace,
    override: ValuesOverride = NO_OVERRIDE,
) -> Rendered:
    """The render the review would make of the chart at `tree`: the same profiles, values,
    capabilities, sandbox and archive (bot/charts/renders.py), of the head side only, with
    the command line's --values / --set on the profile as `review` applies them."""
    chart = args.chart.strip("/") or "."
    if tree.read(chart_file(chart)) is None:
        raise UsageError(f"--chart {chart}: no Chart.yaml there at {args.ref}")
    config = parse_config(tree.text(CONFIG_PATH), known_checks=REGISTRY.options)
    profile = chosen_profile(chart, tree, config, args.profile, args.ref)
    capabilities = Capabilities(
        parse_kube_version(args.kube_version, "--kube-version")
        if args.kube_version
        else config.kube_version,
        parse_api_versions(args.api_versions, "--api-versions") or tuple(config.api_versions),
    )
    # The command's own pools and memos (bot/charts/resources.py), ended with it.
    with Resources() as resources, resources.active():
        settings = RenderSettings(
            config,
            make_renderer(args.renderer, render_limits()),
            RenderCache(),
            repo,
            args.release_name or config.release_name or DEFAULT_RELEASE,
            args.namespace or config.namespace or DEFAULT_NAMESPACE,
            resources.pools,
            only=(profile,),
            capabilities=capabilities,
            override=override,
            # The ref's own repositories are allowed: the user chose what to render.
            fetch=ReviewFetch(fetcher_from(args), config.dependencies, tree, args.offline),
        )
        renders = render_chart(ChartSource(chart, _NoChart(repo, tree.commit), tree), settings)
    return renders.head[profile]


def chosen_profile(
    chart: str, tree: GitTree, config: Config, requested: str | None, ref: str
) -> str:
    names = list(discover_profiles(chart, tree.paths(chart), config.profiles_for(chart)))
    listed = ", ".join(names)
    if requested is None:
        if len(names) == 1:
            return names[0]
        raise UsageError(f"--profile: chart {chart} has profiles {listed} at {ref}; name one")
    if requested not in names:
        raise UsageError(
            f"--profile {requested}: chart {chart} has no such profile at {ref} (it has {listed})"
        )
    return requested


class _NoChart(GitTree):
    """The side render_chart must leave alone: a review renders base and head, this command only
    the one commit asked for."""

    def read(self, path: str) -> bytes | None:
        return None


class _Dumper(yaml.SafeDumper):
    """Parsed documents share identical parts (bot/model/manifests.py): written out whole, never
    as YAML anchors and aliases, which `helm template` never prints."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def helm_template_text(documents: Iterable[Document]) -> str:
    """Each object as `helm template` prints it: `---`, a `# Source:` line (here the template's
    path in the repository, as findings name it), then the object, its keys in rendered order."""
    parts = []
    for doc in documents:
        body = yaml.dump(
            dict(doc.body), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 16
        )
        parts.append(f"---\n# Source: {doc.template}\n{body}")
    return "".join(parts)
