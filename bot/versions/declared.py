"""What a repository declares, in files it keeps, about bumping a chart's version in each PR, read
before any history is (bot/versions/policy.py), in this order:

1. `.github/chart-review.yml`'s `version.bump` (`per-change` or `at-release`, or one per chart);
2. its CI: `ct lint` (or `lint-and-install`) run on the chart, which fails a PR whose version does
   not increase unless `check-version-increment` is off for that run (its flag, `CT_*`
   environment or config file); and a pull-request step named for a version check. A ct.yaml that
   no CI step runs declares nothing;
3. its release practice: release tooling that moves versions at release (release-please,
   semantic-release, changesets), or the chart's changelog keeping an Unreleased section (now, or
   before its latest releases).

Read at the target branch's tip, which the PR cannot change."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence

from bot.git.history import LogEntry
from bot.git.objects import Tree
from bot.model.chart_files import dir_prefix
from bot.model.ci.tooling import release_tools, version_guards
from bot.model.ct_config import VersionGate, version_gates
from bot.versions.rule import CONFIG_FILE, Basis, BumpRule, Level

PER_CHANGE, AT_RELEASE = "per-change", "at-release"
CHANGELOGS = ("CHANGELOG.md", "changelog.md", "Changelog.md", "CHANGELOG")
# Keep a Changelog's `## [Unreleased]`, in any case, and the headings that mean the same.
UNRELEASED_RE = re.compile(
    r"^#{1,6}[ \t]*\[?[ \t]*(?:unreleased|upcoming(?:[ \t]+(?:release|changes))?"
    r"|next[ \t]+(?:release|version))\b",
    re.IGNORECASE | re.MULTILINE,
)
# How many of the changelog's recent versions are read for an Unreleased section that a release
# since replaced with its version.
CHANGELOG_VERSIONS = 5
HEADING_CHARS = 60  # of the heading quoted back
# Reads a file at another commit: (commit, path) → its text, or None.
Reader = Callable[[str, str], str | None]


def declared_rule(
    tree: Tree,
    chart_path: str,
    bump: str | Mapping[str, str] | None,
    history: Sequence[LogEntry] = (),
    read: Reader | None = None,
) -> BumpRule | None:
    """The rule the repository declares for the chart at `chart_path` at `tree`, or None.
    `bump`: the config's `version.bump`; `history`: the branch's recent first-parent entries (for
    the changelog's past); `read(commit, path)` reads a file at another commit."""
    return (
        _configured(chart_path, bump)
        or _ct(version_gates(tree, chart_path))
        or _guard(tree)
        or _tooling(tree, chart_path)
        or _changelog(tree, chart_path, history, read)
    )


def configured_mode(chart_path: str, bump: str | Mapping[str, str] | None) -> str | None:
    """`version.bump` for the chart: one mode for all, or the first glob matching its path."""
    if bump is None or isinstance(bump, str):
        return bump
    if chart_path in bump:
        return bump[chart_path]
    return next((m for glob, m in bump.items() if fnmatch.fnmatchcase(chart_path, glob)), None)


def _configured(chart_path: str, bump: str | Mapping[str, str] | None) -> BumpRule | None:
    mode = configured_mode(chart_path, bump)
    if mode == PER_CHANGE:
        said = f"`{CONFIG_FILE}` declares `version.bump: per-change`."
        return BumpRule(Level.ENFORCED, Basis.CONFIG, said, CONFIG_FILE)
    if mode == AT_RELEASE:
        said = f"Not enforced: `{CONFIG_FILE}` declares `version.bump: at-release`."
        return BumpRule(Level.NOT_ENFORCED, Basis.CONFIG, said, CONFIG_FILE)
    return None


def _ct(gates: Sequence[VersionGate]) -> BumpRule | None:
    checking = [g for g in gates if g.checks]
    if checking:
        gate = checking[0]
        said = (
            f"CI runs `ct {gate.run.subcommand}` on this chart ({gate.run.where}), which fails a "
            f"PR whose chart version does not increase ({gate.said_by})."
        )
        return BumpRule(Level.ENFORCED, Basis.CT_LINT, said, gate.run.where)
    if gates and all(g.checks is False for g in gates):
        gate = gates[0]
        said = (
            f"Not enforced: CI runs `ct {gate.run.subcommand}` on this chart with "
            f"{gate.said_by} ({gate.run.where})."
        )
        return BumpRule(Level.NOT_ENFORCED, Basis.CT_OFF, said, gate.run.where)
    return None


def _guard(tree: Tree) -> BumpRule | None:
    guards = version_guards(tree)
    if not guards:
        return None
    guard = guards[0]
    said = f"CI checks the version of each PR (`{guard.name}`, {guard.where})."
    return BumpRule(Level.ENFORCED, Basis.VERSION_GUARD, said, guard.where)


def _tooling(tree: Tree, chart_path: str) -> BumpRule | None:
    for tool in release_tools(tree):
        if tool.at_release and tool.covers(chart_path):
            said = (
                f"Not enforced: this repository releases with {tool.name} ({tool.where}), which "
                "moves versions at release."
            )
            return BumpRule(Level.NOT_ENFORCED, Basis.RELEASE_TOOLING, said, tool.where)
    return None


def _changelog(
    tree: Tree, chart_path: str, history: Sequence[LogEntry], read: Reader | None
) -> BumpRule | None:
    prefix = dir_prefix(chart_path)
    path = next((prefix + n for n in CHANGELOGS if tree.is_file(prefix + n)), None)
    if path is None:
        return None
    heading = _unreleased(tree.text(path)) or _had_unreleased(path, history, read)
    if heading:
        said = (
            f"Not enforced: `{path}` keeps an Unreleased section (`{heading}`), so versions move "
            "at release."
        )
        return BumpRule(Level.NOT_ENFORCED, Basis.CHANGELOG, said, path)
    return None


def _unreleased(text: str | None) -> str | None:
    """The changelog's Unreleased heading, as written (its first HEADING_CHARS characters)."""
    if text is None:
        return None
    match = UNRELEASED_RE.search(text)
    if match is None:
        return None
    end = text.find("\n", match.start())
    line = text[match.start() : end if end >= 0 else len(text)].strip()[:HEADING_CHARS]
    return line.replace("`", "'")  # quoted in a code span


def _had_unreleased(path: str, history: Sequence[LogEntry], read: Reader | None) -> str | None:
    """The Unreleased heading the changelog had before one of the last commits that changed it:
    a release replaces the section with its version, and the next PR adds it back."""
    if read is None:
        return None
    touching = [e for e in history if path in e.paths and e.parents][:CHANGELOG_VERSIONS]
    return next((h for e in touching if (h := _unreleased(read(e.parents[0], path)))), None)
