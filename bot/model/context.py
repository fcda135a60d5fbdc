"""What a check reads. Values only, plus read-only views of git passed in by the engine: a check never
imports an adapter, so the same check runs from the CLI, the worker and the tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from bot.git.objects import ChangedFile, Commit, GitView, Tree
from bot.model.config import Config, ProfileSpec
from bot.model.manifests import Document


@dataclass(frozen=True)
class OpenPR:
    """Another open pull request of the same repository (or of a linked one)."""

    number: int
    head: str  # commit sha
    ref: str = ""  # branch name, when known
    base_ref: str = ""  # the branch it targets, when known
    title: str = ""
    body: str = ""  # its description; on the command line, its commits' messages unless given
    created_at: str = ""  # when it was opened (ISO 8601), when known


@dataclass(frozen=True)
class PullRequestInfo:
    number: int | None = None
    title: str = ""
    body: str = ""
    commits: tuple[Commit, ...] = ()


@dataclass(frozen=True)
class LinkedRepo:
    """Another repository a reference names. `git` is None when it cannot be read, with `reason`."""

    name: str
    git: GitView | None = None
    develop: str | None = None  # commit sha of its integration branch
    open_prs: tuple[OpenPR, ...] = ()
    reason: str = ""
    branch: str = "develop"  # the name of the branch `develop` is, for the words


class RepoResolver(Protocol):
    def __call__(self, name: str) -> LinkedRepo: ...


def no_links(name: str) -> LinkedRepo:
    return LinkedRepo(name=name, reason="no access to other repositories was configured")


@dataclass(frozen=True)
class RenderError:
    template: str | None
    line: int | None
    message: str
    # A dependency the review did not have (not committed under charts/): the chart could not be
    # looked at, which says nothing about its templates.
    unavailable: bool = False


class LintSeverity(StrEnum):
    """Helm's lint severities by name (the render layer has Helm's numbers for them)."""

    UNKNOWN = "unknown"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class LintMessage:
    """One message of `helm lint` on a profile (bot/charts/lint.py): `path` the repository
    path of the file it names (None for the chart as a whole or a directory), `line` the line Helm
    names."""

    severity: LintSeverity
    path: str | None
    line: int | None
    message: str


@dataclass(frozen=True)
class Rendered:
    """One render of one chart, at one side, for one profile."""

    profile: str
    documents: tuple[Document, ...] = ()
    error: RenderError | None = None
    values: Mapping[str, Any] = field(default_factory=dict)  # what the profile supplies, unmerged
    # `helm lint` with the same values, as ct lint runs it; None when not linted (a renderer that
    # cannot, a render a limit stopped, a side not rendered at all).
    lint: tuple[LintMessage, ...] | None = None
    # A digest of Helm's output, byte for byte (None: no output): two profiles of a side with the
    # same output are linted once (bot/charts/renders.py).
    output: str | None = None


@dataclass(frozen=True)
class Subchart:
    name: str
    directory: str  # in the chart's archive: `charts/redis/`
    base: str | None  # its version on each side; None where the side does not have it
    head: str | None

    @property
    def bump(self) -> str | None:
        """ "dependency redis 17.3.0 → 18.1.2" when the PR changed its version."""
        if self.base is None or self.head is None or self.base == self.head:
            return None
        return f"dependency {self.name} {self.base} → {self.head}"


@dataclass(frozen=True)
class ChartRenders:
    """A chart under review: its renders at base and head per profile (a profile missing from a side
    was not rendered there: added or removed by the PR)."""

    path: str
    name: str
    base: Mapping[str, Rendered]
    head: Mapping[str, Rendered]
    profiles: Mapping[str, ProfileSpec] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)  # side → why its tree was refused
    # side → schema file → why it was left out of the render (it reached outside the chart)
    unvalidated: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # side → subchart directory in the archive (`charts/redis/`) → its version on that side
    dependencies: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def side(self, side: str) -> Mapping[str, Rendered]:
        return self.base if side == "base" else self.head

    def subchart(self, template: str | None) -> Subchart | None:
        """The subchart (a dependency under the chart's `charts/`) that `template`, a repository
        path as findings give it, belongs to; None for the chart's own templates."""
        if not template or not template.startswith(self.path + "/"):
            return None
        inside = template[len(self.path) + 1 :]
        base, head = self.dependencies.get("base", {}), self.dependencies.get("head", {})
        for directory in sorted(head.keys() | base.keys(), key=len, reverse=True):
            if inside.startswith(directory):
                name = directory.rstrip("/").rsplit("/", 1)[-1]
                return Subchart(name, directory, base.get(directory), head.get(directory))
        return None


@dataclass(frozen=True)
class Context:
    config: Config
    git: GitView
    base: Tree  # the merge base of the PR: what the PR's changes are measured against
    head: Tree
    target: Tree  # the tip of the branch the PR targets
    develop: Tree | None
    changes: tuple[ChangedFile, ...]
    charts: tuple[ChartRenders, ...]
    open_prs: tuple[OpenPR, ...] = ()
    pr: PullRequestInfo = PullRequestInfo()
    links: RepoResolver = no_links
    release_name: str = "release"
    namespace: str = "default"
    # How messages name the target branch and the integration branch (`main`, `develop`): the
    # branches actually used, never a name the repository does not have.
    target_name: str = "the target branch"
    develop_name: str = "develop"
    # The time the review stands at (seconds since the epoch): a replay's change's, so what was
    # released is read as it was then; None: now.
    as_of: int | None = None
    # Other open PRs' renders (head sha → their renders of charts under review that they touch,
    # measured from this review's base): bot/charts/other_renders.py says which.
    other_renders: Mapping[str, tuple[ChartRenders, ...]] = field(default_factory=dict)
    # The Kubernetes version the charts were rendered for (`v1.36.0`): the one given, else the
    # renderer's own default; None when it could not be read.
    kube_version: str | None = None

    def changed(self, path: str) -> ChangedFile | None:
        for change in self.changes:
            if change.path == path:
                return change
        return None

    def for_chart(self, chart: ChartRenders) -> ChartContext:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Context)}
        return ChartContext(**fields, chart=chart)


@dataclass(frozen=True, kw_only=True)
class ChartContext(Context):
    """What a per-chart check reads: the review's context and the one chart it is run on."""

    chart: ChartRenders
