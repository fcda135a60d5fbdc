"""`chart-review demo`: throwaway repositories built from examples/, and the report for each PR.

examples/repo/ is develop's first commit. Each examples/prs/SCENARIO/ is one repository's story: its
NNN-slug/ folders are pull requests, laid down in order, each with `pr.yaml` (number, branch, title,
body; `from: develop` to branch from develop as it stands then instead of from its first commit;
`merge: true` to land it on develop at once; `tag` to release the result) and `files/`, laid over
the commit it branches from. Each scenario gets a fresh repository.

A PR's `links: [OWNER/NAME, ...]` reviews it as `--link OWNER/NAME=PATH` would, PATH being a
repository built from examples/linked/OWNER/NAME/ (its own `repo/` and NNN-slug/ PR folders, in the
same format; its PRs are left open as `refs/pull/N/head`), once per scenario that names it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from bot.charts.resources import Resources
from bot.cli.links import REPO_NAME_RE, local_resolver
from bot.cli.report_writer import ReportWriter
from bot.engine.review import Engine, ReviewInput, ReviewResult
from bot.errors import UsageError
from bot.git.repo import GitRepo
from bot.model.check import Registry
from bot.model.context import OpenPR, PullRequestInfo, RepoResolver, no_links
from bot.render.cache import RenderCache
from bot.render.embedded import EmbeddedHelm

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEVELOP = "develop"
# examples/linked/OWNER/NAME/ holds a linked repository; the demo builds it at linked/SCENARIO/OWNER/NAME
LINKED = "linked"


@dataclass(frozen=True)
class DemoPR:
    number: int
    branch: str
    title: str
    body: str
    merge: bool
    files: Path
    delete: tuple[str, ...]
    from_develop: bool = False
    tag: str | None = None
    links: tuple[str, ...] = ()  # OWNER/NAME of each repository under examples/linked/ it reads


def scenarios(root: Path) -> list[Path]:
    return sorted(p for p in (root / "prs").iterdir() if p.is_dir())


def load_prs(scenario: Path) -> list[DemoPR]:
    prs = []
    for folder in sorted(p for p in scenario.iterdir() if (p / "pr.yaml").is_file()):
        meta: dict[str, Any] = yaml.safe_load((folder / "pr.yaml").read_text())
        prs.append(
            DemoPR(
                number=int(meta["number"]),
                branch=str(meta["branch"]),
                title=str(meta.get("title", "")),
                body=str(meta.get("body", "")),
                merge=bool(meta.get("merge", False)),
                files=folder / "files",
                delete=tuple(meta.get("delete", ())),
                from_develop=meta.get("from") == DEVELOP,
                tag=meta.get("tag"),
                links=tuple(str(name) for name in meta.get("links", ())),
            )
        )
    return prs


class Builder:
    """Just enough git porcelain to lay the example history down."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.git("init", "-q", "-b", DEVELOP)

    def git(self, *args: str) -> str:
        env = {
            "GIT_AUTHOR_NAME": "demo",
            "GIT_AUTHOR_EMAIL": "demo@example.com",
            "GIT_COMMITTER_NAME": "demo",
            "GIT_COMMITTER_EMAIL": "demo@example.com",
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(self.path),
        }
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env
        )
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def lay(self, files: Path, delete: Sequence[str] = ()) -> None:
        if files.is_dir():
            # copy, not copy2: a copied mtime could make git take a same-sized file for unchanged
            shutil.copytree(files, self.path, dirs_exist_ok=True, copy_function=shutil.copy)
        for rel in delete:
            (self.path / rel).unlink(missing_ok=True)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def build(root: Path, scenario: Path, dest: Path) -> list[DemoPR]:
    """Lay down develop, then each PR in order: branched, committed, `refs/pull/N/head` set, and
    merged at once when it says so."""
    b = Builder(dest)
    b.lay(root / "repo")
    start = b.commit("client chart 1.9.58")
    b.git("tag", "client-1.9.58")
    prs = load_prs(scenario)
    lay_prs(b, start, prs)
    return prs


def build_linked(root: Path, name: str, dest: Path) -> Path:
    """Another repository a PR quotes: examples/linked/OWNER/NAME/repo/ as develop's first commit,
    then its PR folders, laid down like a scenario's."""
    source = root / LINKED / name
    if not REPO_NAME_RE.match(name):
        raise UsageError(f"links: {name!r} is not a repository OWNER/NAME")
    if not (source / "repo").is_dir():
        raise UsageError(f"links: {name}: no {source / 'repo'}")
    dest.mkdir(parents=True)
    b = Builder(dest)
    b.lay(source / "repo")
    lay_prs(b, b.commit(name), load_prs(source))
    return dest


def lay_prs(b: Builder, start: str, prs: Sequence[DemoPR]) -> None:
    for pr in prs:
        b.git("checkout", "-q", "-b", pr.branch, DEVELOP if pr.from_develop else start)
        b.lay(pr.files, pr.delete)
        sha = b.commit(f"{pr.title}\n\n{pr.body}")
        b.git("update-ref", f"refs/pull/{pr.number}/head", sha)
        b.git("checkout", "-q", DEVELOP)
        if pr.merge:
            b.git(
                "merge",
                "-q",
                "--no-ff",
                "-m",
                f"Merge pull request #{pr.number} from {pr.branch}",
                pr.branch,
            )
        if pr.tag:
            b.git("tag", pr.tag)


class DemoOutput(Protocol):
    """Where the demo says what it reviewed: a scenario's title, then each PR's report."""

    def scenario(self, name: str) -> None: ...

    def pr(self, pr: DemoPR, result: ReviewResult) -> None: ...

    def end(self) -> None: ...


@dataclass(frozen=True)
class TextOutput:
    """Markdown (or JSON) reports under `# Scenario:` and `## PR #N` lines: a pipe's, a file's."""

    writer: ReportWriter

    def scenario(self, name: str) -> None:
        sys.stdout.write(f"# Scenario: {name}\n\n")

    def pr(self, pr: DemoPR, result: ReviewResult) -> None:
        text = self.writer.text(result)
        sys.stdout.write(f"## PR #{pr.number} ({pr.branch}): {pr.title}\n\n{text}\n")

    def end(self) -> None:
        pass


def demo_output(fmt: str | None, registry: Registry) -> DemoOutput:
    """Rendered, a screenful per scenario, on a terminal when no `--format` is given; else text."""
    writer = ReportWriter(fmt, registry.sections())
    if not writer.on_terminal():
        return TextOutput(writer)
    from bot.cli.terminal.demo import TerminalOutput  # rich: only for a terminal

    return TerminalOutput(registry.sections())


def run(keep: str | None, fmt: str | None, registry: Registry) -> int:
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="chart-review-demo-"))
    if base.exists() and any(base.iterdir()):
        raise UsageError(f"--keep {base}: directory is not empty")
    out = demo_output(fmt, registry)
    # The demo's pools and memos, for every scenario's reviews, ended with it.
    resources = Resources()
    try:
        for scenario in scenarios(EXAMPLES):
            out.scenario(scenario.name)
            linked = base / LINKED / scenario.name
            review_scenario(scenario, base / scenario.name, linked, out, registry, resources)
        out.end()
        if keep:
            print(
                f"The demo repositories are under {base}; try: chart-review versions --repo {base}/version"
            )
        return 0
    finally:
        resources.close()
        if not keep:
            shutil.rmtree(base, ignore_errors=True)


def review_scenario(
    scenario: Path,
    dest: Path,
    linked: Path,
    out: DemoOutput,
    registry: Registry,
    resources: Resources | None = None,
) -> None:
    dest.mkdir(parents=True)
    prs = build(EXAMPLES, scenario, dest)
    paths = build_links(prs, linked)
    repo = GitRepo(dest)
    engine = Engine(repo, EmbeddedHelm(), registry, RenderCache(), resources=resources)
    still_open = [p for p in prs if not p.merge]
    open_prs = [
        OpenPR(p.number, repo.resolve(p.branch) or "", p.branch, DEVELOP, p.title)
        for p in still_open
    ]
    for pr in still_open:
        others = tuple(o for o in open_prs if o.number != pr.number)
        result = engine.review(
            ReviewInput(
                base=DEVELOP,
                head=pr.branch,
                open_prs=others,
                pr=PullRequestInfo(pr.number, pr.title, pr.body),
                links=link_resolver(pr, paths),
            )
        )
        out.pr(pr, result)


def build_links(prs: Sequence[DemoPR], dest: Path) -> dict[str, Path]:
    """Each repository the scenario's PRs link, built once under dest/OWNER/NAME."""
    names = dict.fromkeys(name for pr in prs for name in pr.links)
    return {name: build_linked(EXAMPLES, name, dest / name) for name in names}


def link_resolver(pr: DemoPR, paths: dict[str, Path]) -> RepoResolver:
    """What `chart-review review --link NAME=PATH` passes for each of the PR's links."""
    links = {name: (str(paths[name]), None) for name in pr.links}
    return local_resolver(links) if links else no_links
