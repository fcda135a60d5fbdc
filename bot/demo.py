"""`chart-review demo`: a throwaway repository built from examples/, and the report for each of its PRs.

examples/repo/ is develop's first commit. Each examples/prs/NNN-slug/ is a pull request: `pr.yaml`
(number, branch, title, body, and `merge: true` for one that lands on develop before the others are
reviewed) and `files/`, laid over develop as it stood when the PR branched."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bot.context import OpenPR, PullRequestInfo
from bot.gitrepo import GitRepo
from bot.markdown import Section, to_markdown
from bot.render import EmbeddedHelm, RenderCache
from bot.review import Engine, ReviewInput

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEVELOP = "develop"


@dataclass(frozen=True)
class DemoPR:
    number: int
    branch: str
    title: str
    body: str
    merge: bool
    files: Path
    delete: tuple[str, ...]


def load_prs(root: Path) -> list[DemoPR]:
    prs = []
    for folder in sorted(p for p in (root / "prs").iterdir() if (p / "pr.yaml").is_file()):
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
            shutil.copytree(files, self.path, dirs_exist_ok=True)
        for rel in delete:
            (self.path / rel).unlink(missing_ok=True)

    def commit(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")


def build(root: Path, dest: Path) -> list[DemoPR]:
    """Lay down develop, branch every PR from develop's first commit, then land the `merge: true` ones."""
    b = Builder(dest)
    b.lay(root / "repo")
    start = b.commit("client chart 1.9.58")
    prs = load_prs(root)
    for pr in prs:
        b.git("checkout", "-q", "-b", pr.branch, start)
        b.lay(pr.files, pr.delete)
        sha = b.commit(f"{pr.title}\n\n{pr.body}")
        b.git("update-ref", f"refs/pull/{pr.number}/head", sha)
    b.git("checkout", "-q", DEVELOP)
    for pr in prs:
        if pr.merge:
            b.git(
                "merge",
                "-q",
                "--no-ff",
                "-m",
                f"Merge pull request #{pr.number} from {pr.branch}",
                pr.branch,
            )
    return prs


def run(keep: str | None, fmt: str, sections: Sequence[Section]) -> int:
    dest = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="chart-review-demo-"))
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"--keep {dest}: directory is not empty")
    dest.mkdir(parents=True, exist_ok=True)
    try:
        prs = build(EXAMPLES, dest)
        repo = GitRepo(dest)
        engine = Engine(repo, EmbeddedHelm(), RenderCache())
        open_prs = [
            OpenPR(p.number, repo.resolve(p.branch) or "", p.branch, DEVELOP, p.title)
            for p in prs
            if not p.merge
        ]
        for pr in (p for p in prs if not p.merge):
            others = tuple(o for o in open_prs if o.number != pr.number)
            result = engine.review(
                ReviewInput(
                    base=DEVELOP,
                    head=pr.branch,
                    open_prs=others,
                    pr=PullRequestInfo(pr.number, pr.title, pr.body),
                ),
            )
            header = f"# PR #{pr.number} ({pr.branch}): {pr.title}\n\n"
            report = result.report
            sys.stdout.write(
                header
                + (report.to_json_text() if fmt == "json" else to_markdown(report, sections))
                + "\n"
            )
        if keep:
            print(
                f"The demo repository is at {dest}; try: chart-review review --repo {dest} --base develop --head {open_prs[0].ref}"
            )
        return 0
    finally:
        if not keep:
            shutil.rmtree(dest, ignore_errors=True)
