"""The release tooling a repository declares, and the workflow steps it names for a version guard:
what says, in its own files, when a chart's version moves.

- release-please, semantic-release and changesets move versions in a release PR or commit made at
  release time: a PR of content is not expected to bump;
- chart-releaser run on a push publishes each chart version that lands: content lands unpublished
  until a change bumps;
- a pull-request workflow step or job named for a version check ("Check chart version bumped")
  fails a PR that does not bump."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bot.git.objects import Tree
from bot.model.ci.runs import ci_commands
from bot.model.ci.shell import UNKNOWN
from bot.model.ci.workflows import Step, workflow_steps

RELEASE_PLEASE_FILES = ("release-please-config.json", ".release-please-manifest.json")
SEMANTIC_RELEASE_FILES = tuple(
    f".releaserc{ext}" for ext in ("", ".json", ".yaml", ".yml", ".js", ".cjs", ".mjs")
) + ("release.config.js", "release.config.cjs", "release.config.mjs")
CHANGESETS_FILE = ".changeset/config.json"
ACTIONS = {
    "googleapis/release-please-action": "release-please",
    "google-github-actions/release-please-action": "release-please",
    "cycjimmy/semantic-release-action": "semantic-release",
    "changesets/action": "changesets",
    "helm/chart-releaser-action": "chart-releaser",
}
AT_RELEASE = frozenset({"release-please", "semantic-release", "changesets"})
PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target", "merge_group"})
# A step or job named for checking that a PR bumped its chart's version: a check, a version and
# a bump, in any order ("Check chart version bumped", "ensure-version-increment"); "Bump chart
# version" alone is an automation, not a guard.
GUARD_WORDS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:check|verify|ensure|require|enforce|validate|guard|assert)",
        r"\bversion",
        r"\b(?:bump|increment|increase)",
    )
)
MAX_CONFIG_BYTES = 256 * 1024


@dataclass(frozen=True)
class ReleaseTool:
    name: str  # "release-please", "semantic-release", "changesets", "chart-releaser"
    where: str  # the file (and line) that says so
    paths: tuple[str, ...] | None = None  # the directories it releases; None: every chart

    @property
    def at_release(self) -> bool:
        return self.name in AT_RELEASE

    def covers(self, chart_path: str) -> bool:
        if self.paths is None:
            return True
        return any(
            chart_path == p or chart_path.startswith(f"{p}/") or p == "." for p in self.paths
        )


def release_tools(tree: Tree) -> tuple[ReleaseTool, ...]:
    """The release tooling at `tree`: its config files, and the workflows that run it (for
    chart-releaser, only those run on a push)."""
    found: list[ReleaseTool] = []
    for path in RELEASE_PLEASE_FILES:
        if tree.is_file(path):
            found.append(ReleaseTool("release-please", path, _release_please_paths(tree, path)))
            break
    found += [
        ReleaseTool("semantic-release", p) for p in SEMANTIC_RELEASE_FILES if tree.is_file(p)
    ][:1]
    if tree.is_file(CHANGESETS_FILE):
        found.append(ReleaseTool("changesets", CHANGESETS_FILE))
    named = {t.name for t in found}
    for step in workflow_steps(tree):
        tool = ACTIONS.get((step.uses or "").split("@", 1)[0].lower())
        if tool is None or tool in named:
            continue
        if tool == "chart-releaser":
            if "push" not in step.on:
                continue
            found.append(ReleaseTool(tool, step.where, _charts_dir(step)))
        else:
            found.append(ReleaseTool(tool, step.where))
        named.add(tool)
    return tuple(found)


def _release_please_paths(tree: Tree, path: str) -> tuple[str, ...] | None:
    data = tree.read(path)
    if data is None or len(data) > MAX_CONFIG_BYTES:
        return None
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    packages = parsed.get("packages") if path == RELEASE_PLEASE_FILES[0] else parsed
    if not isinstance(packages, dict) or not packages:
        return None
    return tuple(str(p).strip("/").removeprefix("./") or "." for p in packages)


def _charts_dir(step: Step) -> tuple[str, ...] | None:
    given = step.with_.get("charts_dir", "charts")
    if UNKNOWN in given:
        return None
    return (given.strip().strip("/").removeprefix("./") or ".",)


def pages_branch(tree: Tree) -> str:
    """The branch chart-releaser keeps the repository's `index.yaml` on (its `pages_branch`)."""
    for step in workflow_steps(tree):
        if (step.uses or "").lower().startswith("helm/chart-releaser-action"):
            branch = step.with_.get("pages_branch")
            if branch and UNKNOWN not in branch:
                return branch
    return "gh-pages"


@dataclass(frozen=True)
class VersionGuard:
    name: str  # the step's or job's name as written
    where: str


def version_guards(tree: Tree) -> tuple[VersionGuard, ...]:
    """Pull-request workflow steps (or their jobs) named for a version check, and scripts they run
    named so (`hack/check-version-bump.sh`)."""
    found: dict[str, VersionGuard] = {}
    for step in workflow_steps(tree):
        if not step.on & PULL_REQUEST_EVENTS:
            continue
        for name in (step.name, step.job):
            if name and is_guard_name(name):
                found.setdefault(step.where, VersionGuard(name, step.where))
    for ran in ci_commands(tree):
        if not ran.step.on & PULL_REQUEST_EVENTS or not ran.command.words:
            continue
        script = (
            ran.command.words[-1] if ran.command.name in ("bash", "sh") else ran.command.words[0]
        )
        base = script.rsplit("/", 1)[-1]
        if UNKNOWN not in base and is_guard_name(base):
            found.setdefault(ran.step.where, VersionGuard(base, ran.where))
    return tuple(found.values())


def is_guard_name(name: str) -> bool:
    words = re.sub(r"[-_./]", " ", name)
    return all(p.search(words) for p in GUARD_WORDS)
