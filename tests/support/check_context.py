"""Any chart check's context from YAML text, with neither git nor Helm: what a check's unit tests
build, in milliseconds, where an end-to-end test (tests/support/pr_review.py: a real repository,
real renders) takes most of a second.

`chart_context(base, head)` takes each side's renders by profile (the rendered YAML, as `helm
template` prints it, or {template path in the chart: its rendered YAML}) and, optionally, each
side's repository files; the PR's changes are the files that differ, with the lines each side
added and removed as a line diff gives them. The config is the YAML text of
`.github/chart-review.yml`, parsed as the engine parses it. `run_check(name, ctx)` is that check's
findings, from the registry the engine is handed.

`files_context(base_files, head_files)` is the same from a chart's repository files alone, as
tests/support/pr_review.py lays them (chart `app`, profiles `ci/<name>-values.yaml`): each
template renders as its own text, the release's name and namespace put in, so a test that reviews
a PR end to end can build its unit twin from the very same files (`review_files`).

What such a context cannot give: provenance (a finding moved to the values line that set its
field is the engine's, after the check), other open PRs' renders, and git: a check that reads
history (`version`) or other repositories (`headings`) is tested end to end."""

from __future__ import annotations

import difflib
import hashlib
import re
import textwrap
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bot.charts.profiles import Profile, discover_profiles
from bot.charts.renders import _spec as profile_spec  # how the engine hands a profile to checks
from bot.engine.review import apply_overrides
from bot.errors import ChartReviewError
from bot.git.objects import ChangedFile
from bot.model.check import Check
from bot.model.config import CONFIG_PATH, ProfileSpec, parse_config
from bot.model.context import ChartContext, ChartRenders, Rendered
from bot.model.manifests import is_manifest_template, parse_rendered
from bot.model.report import Finding, sort_findings
from bot.model.yaml import bounded
from checks import REGISTRY
from tests.support.qos import DictTree

CHART = "charts/app"
ONE_TEMPLATE = (
    "templates/all.yaml"  # where a side's renders given as one text are said to come from
)

# The release the engine renders every chart as (`Context.release_name`).
RELEASE = "release"
# The directives a template given to `files_context` may hold: Helm prints the release's name and
# namespace there (the engine's `Context.release_name` and `namespace`).
RELEASE_RE = re.compile(r"\{\{-?\s*\.Release\.(?P<field>Name|Namespace)\s*-?\}\}")

# A profile's render: the whole output as one text, or the text of each template.
Render = str | Mapping[str, str]


class NoGit:
    """The context's `git` for a check that should not need it: any use says so, by name."""

    def __getattr__(self, name: str) -> Any:
        raise ChartReviewError(
            f"the check asked git for {name!r}: test it on a real repository "
            "(tests/support/pr_review.py or tests/support/gitbuilder.py)"
        )


def rendered(
    profile: str,
    render: Render,
    chart: str = CHART,
    namespace: str = "default",
    values: Mapping[str, Any] | None = None,
) -> Rendered:
    texts = {ONE_TEMPLATE: render} if isinstance(render, str) else dict(render)
    # Helm names each output by the chart's name and the template's path within it.
    by_helm_name = {f"{chart.rsplit('/', 1)[-1]}/{t}": textwrap.dedent(x) for t, x in texts.items()}
    documents = parse_rendered(by_helm_name, chart, namespace)
    return Rendered(profile=profile, documents=documents, values=dict(values or {}))


def changes(base: Mapping[str, str], head: Mapping[str, str]) -> tuple[ChangedFile, ...]:
    """The files that differ between the sides, each with the lines (1-based) the head added and
    the base lost."""
    out = []
    for path in sorted(base.keys() | head.keys()):
        old, new = base.get(path), head.get(path)
        if old == new:
            continue
        status = "A" if old is None else "D" if new is None else "M"
        added, removed = _lines((old or "").splitlines(), (new or "").splitlines())
        out.append(ChangedFile(path, status, None, frozenset(added), frozenset(removed)))
    return tuple(out)


def _lines(old: list[str], new: list[str]) -> tuple[set[int], set[int]]:
    added: set[int] = set()
    removed: set[int] = set()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op != "equal":
            removed.update(range(a0 + 1, a1 + 1))
            added.update(range(b0 + 1, b1 + 1))
    return added, removed


def chart_context(
    base: Mapping[str, Render],
    head: Mapping[str, Render],
    *,
    chart: str = CHART,
    base_files: Mapping[str, str] | None = None,
    head_files: Mapping[str, str] | None = None,
    config: str | None = None,
    namespace: str = "default",
    values: Mapping[str, Mapping[str, Any]] | None = None,
    profiles: Mapping[str, ProfileSpec] | None = None,
) -> ChartContext:
    """`base`/`head`: profile → its render (a profile missing from a side was not rendered there).
    `values`: profile → the values it supplies (`Rendered.values`), the same at both sides;
    `profiles`: the chart's profiles as the engine hands them (`ChartRenders.profiles`)."""
    supplied = values or {}
    renders = ChartRenders(
        path=chart,
        name=chart.rsplit("/", 1)[-1],
        base={p: rendered(p, r, chart, namespace, supplied.get(p)) for p, r in base.items()},
        head={p: rendered(p, r, chart, namespace, supplied.get(p)) for p, r in head.items()},
        profiles=dict(profiles or {}),
    )
    old, new = dict(base_files or {}), dict(head_files or {})
    if config is not None:
        old[CONFIG_PATH] = new[CONFIG_PATH] = textwrap.dedent(config)
    base_tree, head_tree = DictTree(old, commit_of(old)), DictTree(new, commit_of(new))
    return ChartContext(
        config=parse_config(old.get(CONFIG_PATH), known_checks=REGISTRY.options),
        git=NoGit(),  # type: ignore[arg-type]
        base=base_tree,
        head=head_tree,
        target=base_tree,
        develop=None,
        changes=changes(old, new),
        charts=(renders,),
        chart=renders,
        namespace=namespace,
    )


def commit_of(files: Mapping[str, str]) -> str:
    """A commit id for these files, as git's names its content: checks remember what they read of
    a commit by its id (the yaml check its settings), so other files must never share one."""
    digest = hashlib.sha1(usedforsecurity=False)
    for path in sorted(files):
        digest.update(f"{path}\0{files[path]}\0".encode())
    return digest.hexdigest()


def run_check(name: str, ctx: ChartContext) -> list[Finding]:
    check: Check[Any] | None = REGISTRY.by_name(name)
    assert check is not None and check.scope == "chart", f"{name}: no chart check of that name"
    return check.run(ctx)


def files_context(
    base_files: Mapping[str, str | None],
    head_files: Mapping[str, str | None],
    *,
    chart: str = "app",
    config: str | None = None,
) -> ChartContext:
    """The context of a PR on a chart's repository files: `base_files` at base, `head_files` laid
    over them at head (a None value deletes the file), as tests/support/pr_review.py lays them.
    The profiles are those the engine finds (chart-testing's `ci/*-values.yaml` and the config's
    entries); each template renders as its own text with the release's name and namespace in
    place of `{{ .Release.Name }}` and `{{ .Release.Namespace }}`. Any other directive is
    refused: such a template needs Helm, so its test is end to end."""
    old = {p: t for p, t in base_files.items() if t is not None}
    new = {p: t for p, t in {**old, **head_files}.items() if t is not None}
    if config is not None:
        old[CONFIG_PATH] = new[CONFIG_PATH] = textwrap.dedent(config)
    specs = parse_config(old.get(CONFIG_PATH), known_checks=REGISTRY.options).profiles_for(chart)
    found: dict[str, Profile] = {}
    sides: list[tuple[dict[str, Render], dict[str, Mapping[str, Any]]]] = []
    for files in (old, new):
        profiles = _profiles(files, chart, specs)
        found.update(profiles)
        render = {rel: _plain(rel, text) for rel, text in _templates(files, chart).items()}
        sides.append(
            ({n: render for n in profiles}, {n: _values(files, p) for n, p in profiles.items()})
        )
    (base, base_values), (head, head_values) = sides
    ctx = chart_context(
        base,
        head,
        chart=chart,
        base_files=old,
        head_files=new,
        values=head_values,
        profiles={n: profile_spec(p) for n, p in found.items()},
    )
    # Each side's renders with the values that side's files supply.
    at_base = {n: replace(r, values=base_values[n]) for n, r in ctx.chart.base.items()}
    renders = replace(ctx.chart, base=at_base)
    return replace(ctx, chart=renders, charts=(renders,))


def _profiles(files: Mapping[str, str], chart: str, specs: list[ProfileSpec]) -> dict[str, Profile]:
    """The engine's: none where the side has no chart."""
    if f"{chart}/Chart.yaml" not in files:
        return {}
    return discover_profiles(chart, tuple(sorted(files)), specs)


def _values(files: Mapping[str, str], profile: Profile) -> Mapping[str, Any]:
    """What the profile supplies, unmerged with the chart's defaults (`Rendered.values`)."""
    if profile.inline is not None:
        return profile.inline
    if profile.values_path is None:
        return {}
    return bounded.load(files.get(profile.values_path, "")) or {}


def _templates(files: Mapping[str, str], chart: str) -> dict[str, str]:
    prefix = f"{chart}/"
    return {
        path[len(prefix) :]: text
        for path, text in sorted(files.items())
        if path.startswith(f"{prefix}templates/") and is_manifest_template(path)
    }


def _plain(template: str, text: str, namespace: str = "default") -> str:
    said = {"Name": RELEASE, "Namespace": namespace}
    rendered_text = RELEASE_RE.sub(lambda m: said[m["field"]], text)
    if "{{" in rendered_text:
        raise ChartReviewError(
            f"{template}: a directive other than the release's name or namespace needs Helm: "
            "test it end to end (tests/support/pr_review.py)"
        )
    return rendered_text


def review_files(
    base: Mapping[str, str | None],
    head: Mapping[str, str | None],
    check: str,
    config: str | None = None,
    chart: str = "app",
) -> list[Finding]:
    """tests/support/pr_review.py's `review_pr` without git or Helm: that check's findings on the
    PR that lays `head` over `base` (`files_context`), with the config's severities applied and
    in the report's order, as the engine hands them on."""
    ctx = files_context(base, head, chart=chart, config=config)
    return list(sort_findings(apply_overrides(run_check(check, ctx), ctx.config)))
